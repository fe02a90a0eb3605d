"""podlife.yamlload: yaml imported with its reader's NON_PRINTABLE pattern compiled when first used, and the
shortcuts for the same check (api.yamlread.non_printable, api.yamlread.SafeLoader)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from podlife.api.yamlread import _ASCII_NON_PRINTABLE, _FORBIDDEN, SafeLoader, non_printable
from podlife.yamlload import NON_PRINTABLE, LazyPattern

ROOT = Path(__file__).resolve().parent.parent


def test_pyyaml_compiles_the_pattern_the_stand_in_is_made_for() -> None:
    # fails when PyYAML changes its pattern: import_yaml would then make no stand-in, and a run would pay again
    real = yaml.reader.Reader.NON_PRINTABLE
    compiled = real.compiled if isinstance(real, LazyPattern) else real
    assert (compiled.pattern, compiled.flags) == (NON_PRINTABLE, re.compile(NON_PRINTABLE).flags)


def _in_a_fresh_process(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_yaml_leaves_the_pattern_uncompiled_and_re_compile_as_it_was() -> None:
    out = _in_a_fresh_process(
        "import re\nreal = re.compile\n"
        "from podlife.yamlload import LazyPattern, import_yaml\nimport_yaml()\nimport yaml\n"
        "p = yaml.reader.Reader.NON_PRINTABLE\n"
        "print(type(p) is LazyPattern, p._compiled is None, re.compile is real,"
        " type(yaml.resolver.Resolver.yaml_implicit_resolvers['t'][0][1]) is re.Pattern)")
    assert out == "True True True True"


# seed-000-native-sidecar has a behaviour annotation, seed-001 a character outside ASCII
@pytest.mark.parametrize("example", ["seed-003-pod-creation-flow", "seed-000-native-sidecar",
                                     "seed-001-hung-container-kubelet-restart"])
def test_a_small_run_never_compiles_it(example: str) -> None:
    out = _in_a_fresh_process(
        f"import sys\nsys.argv = ['podlife', 'run', 'examples/{example}.yaml', '--quiet']\n"
        "from podlife.cli import entry\ntry:\n    entry()\nexcept SystemExit:\n    pass\n"
        "import yaml\nprint(yaml.reader.Reader.NON_PRINTABLE._compiled is None)")
    assert out == "True"


def test_the_stand_in_finds_what_the_pattern_finds() -> None:
    lazy, real = LazyPattern(NON_PRINTABLE, 0), re.compile(NON_PRINTABLE)
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert lazy._compiled is None
    assert lazy.findall(every) == real.findall(every) and lazy.findall(every)   # every code point
    for text in ("plain", "tab\there", "bell\x07", "caf\u00e9", "\ufeffbom", "\x85next line", "\ud800", ""):
        assert (lazy.search(text) is None) == (real.search(text) is None)
        assert _span(lazy.match(text)) == _span(real.match(text))
    assert (lazy.pattern, lazy.flags) == (real.pattern, real.flags)


def _span(m: re.Match[str] | None) -> tuple[int, int] | None:
    return m.span() if m else None


def test_the_shortcuts_agree_with_the_pattern() -> None:
    real = re.compile(NON_PRINTABLE)
    for code in range(128):
        assert (_ASCII_NON_PRINTABLE.search(chr(code)) is None) == (real.search(chr(code)) is None), code
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert re.findall(_FORBIDDEN, every) == real.findall(every)   # the same characters, every code point
    texts = ["kind: Scenario\n", "a: 1\r\n\tb: 2\n", "x\x00", "x\x1b[0m", "x\x7f", "caf\u00e9", "caf\u00e9\x01",
             "\x85", "\ufffe", "\U0001f600", "\ud7ff\ue000", ""]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.yaml"))]
    for text in texts:
        assert non_printable(text) == (real.search(text) is not None), text[:40]


def test_the_safe_loader_reads_and_refuses_as_pyyaml_does() -> None:
    texts = ["web: {onTerm: exit, exitCode: 3}\n", "a: [1, 2.5, true, null, '2021-02-03']\n", "a: b\x07\n",
             "caf\u00e9: 1\n", "a: \x85\n", "x: \ud800\n", "- 1\n- {a: \x1b}\n", "a: 'unterminated\n", ""]
    for text in texts:
        try:
            want: object = yaml.safe_load(text)
        except yaml.YAMLError as e:
            want = ("error", str(e))
        try:
            got: object = yaml.load(text, Loader=SafeLoader)
        except yaml.YAMLError as e:
            got = ("error", str(e))
        assert got == want, text
