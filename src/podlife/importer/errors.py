"""The one error a bad dump ends with: where (the file, or the object) and what was expected. It is a
ScenarioError, so every command reports it as bad input (exit 2)."""

from __future__ import annotations

from podlife.scenario.errors import ScenarioError


class DumpError(ScenarioError):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(where, None, "", message)
