"""Same bytes before and after: record every example's and every test scenario's outputs with one checkout,
then compare two recordings. Not a test: it is how a speed change shows that it changed no behaviour.

    python bench/samebytes.py record CHECKOUT OUTDIR [--no-tests]   # CHECKOUT/.venv runs everything
    python bench/samebytes.py compare OUTDIR_A OUTDIR_B

``record`` runs ``podlife run`` on every YAML file under CHECKOUT/examples (the summary, ``--report`` and
``--klog`` of each; where the checkout streams reports, it also checks that each streamed report holds the
same), then CHECKOUT's test suite with this file as a pytest plugin, which writes the report and the klog text
of every scenario a test runs (``podlife.scenario.run.run``), named after the test.
``compare`` lists the files that differ or that only A has (a new test's files, only in B, are counted) and
exits 1 if there is any.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_OUT = "PODLIFE_SAMEBYTES_OUT"


def record(checkout: Path, out: Path, tests: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    podlife = checkout / ".venv" / "bin" / "podlife"
    examples = sorted((checkout / "examples").rglob("*.yaml"))
    for path in examples:
        stem = str(path.relative_to(checkout / "examples")).replace("/", "__")
        proc = subprocess.run([str(podlife), "run", str(path.relative_to(checkout)),
                               "--report", str(out / f"{stem}.json"), "--klog", str(out / f"{stem}.log")],
                              capture_output=True, cwd=checkout)
        (out / f"{stem}.stdout").write_bytes(proc.stdout + f"exit {proc.returncode}\n".encode())
        _unplace(out / f"{stem}.json", checkout)
    print(f"{len(examples)} examples recorded in {out}")
    if any((checkout / "src" / "podlife" / d / "stream.py").exists() for d in ("report", "trace")):
        _check_streamed(checkout, examples, out)
    if not tests:
        return 0
    env = dict(os.environ, **{_OUT: str((out / "tests").resolve()),
                              "PYTHONPATH": str(Path(__file__).resolve().parent)})
    proc = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-m", "pytest",
                           "-p", "samebytes", "-p", "no:cacheprovider",
                           # the same temporary paths in both recordings (they appear in warnings)
                           "--basetemp", "/tmp/podlife-samebytes-tmp",
                           # interrupts a sweep after a wall-clock delay: how many runs it records is timing
                           "--deselect", "tests/test_sweep.py::test_ctrl_c_keeps_the_finished_rows"],
                          cwd=checkout, env=env)
    print(f"tests' scenarios recorded in {out / 'tests'}")
    return proc.returncode


def _check_streamed(checkout: Path, examples: list[Path], out: Path) -> None:
    """Each example's streamed report (.ndjson) must hold the JSON report's records and objects."""
    python = str(checkout / ".venv" / "bin" / "python")
    code = ("import sys, orjson\n"
            "try:\n    from podlife.report import stream\n"
            "except ImportError:\n    from podlife.trace import stream  # before podlife.report\n"
            "a = stream.read(open(sys.argv[1], 'rb').read()); a.pop('trace'); a.pop('figures')\n"
            "sys.exit(0 if a == orjson.loads(open(sys.argv[2], 'rb').read()) else 1)\n")
    bad = 0
    for path in examples:
        stem = str(path.relative_to(checkout / "examples")).replace("/", "__")
        streamed = out / f"{stem}.ndjson"
        subprocess.run([str(checkout / ".venv" / "bin" / "podlife"), "run", str(path.relative_to(checkout)),
                        "--quiet", "--report", str(streamed)], capture_output=True, cwd=checkout)
        _unplace(streamed, checkout)
        if subprocess.run([python, "-c", code, str(streamed), str(out / f"{stem}.json")]).returncode:
            print(f"streamed report differs: {stem}")
            bad += 1
        streamed.unlink()
    print(f"{len(examples)} streamed reports checked, {bad} differ")


def _unplace(path: Path, checkout: Path) -> None:
    """Where the checkout is (in paths of warnings) is not behaviour."""
    if path.exists():
        path.write_bytes(path.read_bytes().replace(str(checkout).encode(), b"<checkout>"))


def compare(a: Path, b: Path) -> int:
    names_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    bad = new = 0
    for name in sorted(names_a | names_b):
        if name not in names_b:
            print(f"only in {a}: {name}")
            bad += 1
        elif name not in names_a:
            new += 1   # a scenario of a new test
        elif (a / name).read_bytes() != (b / name).read_bytes():
            print(f"differs: {name}")
            bad += 1
    print(f"{len(names_a & names_b)} files in both, {bad} differ or are missing in {b}; {new} new in {b}")
    return 1 if bad else 0


# ---- the pytest plugin (loaded with -p samebytes by ``record``) ----------------------------------------

def pytest_configure(config) -> None:  # noqa: ANN001
    out = os.environ.get(_OUT)
    if not out:
        return
    import orjson

    import podlife.scenario.run as run_module

    try:
        from podlife.report import klog
        from podlife.report.assemble import report
    except ImportError:   # a checkout from before podlife.report
        from podlife.trace import klog  # type: ignore[no-redef]

        report = run_module.report  # type: ignore[attr-defined]

    real_run = run_module.run
    seen: dict[str, int] = {}

    def run(sc, *args, **kwargs):  # noqa: ANN001, ANN202
        result = real_run(sc, *args, **kwargs)
        test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").rsplit(" (", 1)[0]
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in test)
        n = seen[stem] = seen.get(stem, 0) + 1
        rep = report(result)
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, f"{stem}.{n}.json").write_bytes(orjson.dumps(rep, option=orjson.OPT_INDENT_2))
        Path(out, f"{stem}.{n}.log").write_text(klog.render(rep["records"], sc.start_time))
        _unplace(Path(out, f"{stem}.{n}.json"), Path.cwd())
        return result

    run_module.run = run


def main() -> int:
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "record":
        return record(Path(args[1]).resolve(), Path(args[2]).resolve(), "--no-tests" not in args)
    if len(args) == 3 and args[0] == "compare":
        return compare(Path(args[1]), Path(args[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
