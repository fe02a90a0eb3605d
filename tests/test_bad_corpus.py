"""Runs the bad-input corpus (tests/bad_corpus.py) through the real CLI in this process: each case ends with
exit 2, quickly, and its message names the file, line and field path as expected. Categories are counted so
the corpus keeps its breadth."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main
from podlife.versions import NEWEST
from tests import bad_corpus
from tests.helpers import within

HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n"
SECONDS = 5
CATEGORIES = {name: getattr(bad_corpus, name) for name in ("YAML", "CLUSTER", "PODS", "KINDS", "ACTIONS")}
CASES = [(cat, case[0], case[1], case[2], case[3] if len(case) > 3 else None)
         for cat, cases in CATEGORIES.items() for case in cases]


def run_case(tmp_path: Path, text: str | bytes, extra: dict[str, str | bytes] | None = None) -> tuple[int, str, float]:
    path = tmp_path / "bad.yaml"
    if isinstance(text, bytes):   # bytes are a whole file (encodings, line endings, control characters)
        path.write_bytes(text)
    else:
        path.write_text(text if text.startswith("#") else HEAD + text, encoding="utf-8")
    for name, content in (extra or {}).items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    start = time.process_time()
    res = within(SECONDS, CliRunner().invoke, main, ["run", str(path), "--quiet"])
    return res.exit_code, res.output, time.process_time() - start


@pytest.mark.parametrize("category, name, text, expected, extra", CASES,
                         ids=[f"{c[0].lower()}: {c[1]}" for c in CASES])
def test_bad_input_ends_with_exit_2_naming_file_line_and_field(tmp_path, category, name, text, expected, extra):
    code, out, _ = run_case(tmp_path, text, extra)
    assert code == 2, out
    lines = out.strip().splitlines()
    want = expected.replace("<newest>", NEWEST).replace("DIR/", f"{tmp_path}/")
    if want.startswith(f"{tmp_path}/"):   # the message is about a file the scenario pulls in
        assert any(line.startswith(want) for line in lines), out
    else:
        assert any(line.startswith(f"{tmp_path / 'bad.yaml'}{want}") for line in lines), out
    assert "Traceback" not in out and "internal error" not in out


HELLO = Path(__file__).parent.parent / "examples" / "hello.yaml"


@pytest.mark.parametrize("args, expected", bad_corpus.CLI, ids=[" ".join(a)[:80] for a, _ in bad_corpus.CLI])
def test_bad_command_line_ends_with_exit_2(tmp_path, args, expected):
    for name, content in bad_corpus.CLI_FILES.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    args = [a.replace("<hello>", str(HELLO)).replace("<dir>", str(tmp_path)) for a in args]
    res = within(SECONDS, CliRunner().invoke, main, args)
    want = expected.replace("<hello>", str(HELLO)).replace("<dir>", str(tmp_path)).replace("<newest>", NEWEST)
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1].startswith(want), res.output


def test_the_corpus_keeps_its_breadth():
    assert {cat: len(cases) for cat, cases in CATEGORIES.items()} | {"CLI": len(bad_corpus.CLI)} == {
        "YAML": 100, "CLUSTER": 105, "PODS": 152, "KINDS": 146, "ACTIONS": 116, "CLI": 77}
