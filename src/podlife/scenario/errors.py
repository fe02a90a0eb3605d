"""The one error an invalid scenario produces (``podlife run`` prints it and exits 2)."""

from __future__ import annotations


class ScenarioError(Exception):
    """Invalid scenario input: ``FILE[:LINE]: PATH: MESSAGE``.

    ``str()`` is e.g. ``scenario.yaml:12: spec.actions[2].at: "10x" is not a duration; expected …``.
    ``line`` is 1-based, None when unknown (a value given on the command line); ``path`` is the field path,
    "" when the error is about the file as a whole (unreadable, invalid YAML), and then it is left out.
    """

    def __init__(self, file: str, line: int | None, path: str, message: str):
        super().__init__(file, line, path, message)  # keeps the exception picklable
        self.file = file
        self.line = line
        self.path = path
        self.message = message

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
