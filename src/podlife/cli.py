"""The ``podlife`` command."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from podlife import __version__

# Start-up: each subcommand imports what it needs inside itself (``--help`` and ``versions`` do not load the
# model, ``run`` does not load the API server); tests/test_startup.py keeps it so.


@click.group()
@click.version_option(__version__, prog_name="podlife")
def main() -> None:
    """Predict what Kubernetes does to a pod: run scenarios against a simulated cluster."""


def entry() -> None:
    """The ``podlife`` executable: ``main`` in a process of its own, which collects garbage as one model run
    wants and leaves its heap to the operating system at exit (podlife.engine.gcpolicy.one_run_process), and whose
    dataclasses' methods come compiled from the last run (podlife.engine.dataclasscode)."""
    from podlife.engine import dataclasscode
    from podlife.engine.gcpolicy import at_exit, one_run_process

    one_run_process()
    dataclasscode.install()
    try:
        main()
    finally:
        at_exit()


@contextmanager
def user_input(path: str) -> Iterator[None]:
    """Bad input (the scenario, its manifests, the command line) ends the command with exit 2; anything else
    that goes wrong is an internal error, exit 3, never mistaken for bad input."""
    from podlife.scenario.errors import ScenarioError

    try:
        yield
    except ScenarioError as e:
        click.echo(str(e), err=True)
        sys.exit(2)
    except OSError as e:
        click.echo(f"{e.filename or path}: {e.strerror}", err=True)
        sys.exit(2)
    except Exception as e:  # noqa: BLE001
        if os.environ.get("PODLIFE_DEBUG"):
            import traceback

            traceback.print_exc()
        click.echo(f"podlife: internal error: {type(e).__name__}: {e} (set PODLIFE_DEBUG=1 for details)",
                   err=True)
        sys.exit(3)


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Write the trace report: JSON, or newline-delimited JSON written as the run goes when FILE "
                   "ends in .ndjson or .jsonl (for large runs).")
@click.option("--klog", "klog_path", type=click.Path(dir_okay=False), help="Write the component logs as klog text.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Write the timeline as one self-contained HTML page.")
@click.option("--until", help="Simulated time limit (Go duration), overriding the scenario's.")
@click.option("--kubernetes-version", help="Kubernetes version (1.29, v1.29 or 1.29.3: the minor counts), "
                                           "overriding the scenario's.")
@click.option("--seed", type=int, help="Random seed, overriding the scenario's.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field.")
@click.option("--at", "at", metavar="D[,D...]",
              help="Also print kubectl-style pod tables at these simulated instants (e.g. 30s,1m).")
@click.option("--quiet", is_flag=True, help="Print only failed expectations.")
@click.option("--trace", "trace_level", type=click.Choice(["full", "objects", "summary"]), default="full",
              show_default=True,
              help="Which records the run makes: full; objects (no component log records); summary (only the "
                   "aggregate figures, no records or final objects in the report).")
@click.option("--delete", "deletes", multiple=True, metavar="KIND/NAME[@TIME]",
              help="With plain manifests: delete this object at TIME (default 0s), e.g. pod/web@10s.")
@click.option("--from", "dumps", multiple=True, metavar="DUMP",
              help="Run on the cluster of this dump (kubectl get ... -o yaml|json, a directory of them, a kubectl "
                   "cluster-info dump directory, or podlife import's output), from the instant it was taken. "
                   "Repeatable.")
def run(scenario: str, report_path: str | None, klog_path: str | None, html_path: str | None, until: str | None,
        kubernetes_version: str | None, seed: int | None, overrides: tuple[str, ...], at: str | None,
        quiet: bool, trace_level: str, deletes: tuple[str, ...], dumps: tuple[str, ...]) -> None:
    """Run SCENARIO (a podlife Scenario, or plain Kubernetes manifests; - reads standard input) and print
    what happened."""
    from podlife.engine.simpyload import import_simpy
    from podlife.yamlload import import_yaml

    import_simpy()   # first, before the model's modules import them
    import_yaml()
    from podlife.report.outputs import Outputs, ReportWriter
    from podlife.scenario import plain
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run as run_scenario
    from podlife.scenario.yamlread import decode_text, read_text

    outputs = Outputs(report=report_path, klog=klog_path, html=html_path, summary=True, quiet=quiet,
                      trace_level=trace_level)
    with user_input(scenario):
        path = plain.STDIN if scenario == "-" else scenario
        outputs.check()
        text = decode_text(sys.stdin.buffer.read(), path) if scenario == "-" else read_text(scenario)
        sources = {}
        if not plain.is_scenario(text):
            from podlife.importer import declared

            if scenario != "-" and not deletes and declared.is_dump(text):
                click.echo(f"warning: {scenario}: a cluster dump: its cluster runs on from the instant it was "
                           f"taken, as with --from {scenario}", err=True)
                dumps = dumps or (scenario,)
                text = declared.scenario_around(scenario)
            else:
                if scenario == "-":
                    sources[plain.STDIN] = text
                text = plain.wrap(scenario, plain.delete_actions(deletes, path))
        elif deletes:
            raise ScenarioError(path, None, "--delete", "only for plain manifests; a Scenario lists its "
                                                        "deletes in spec.actions")
        elif not dumps:
            from podlife.importer.declared import named_dumps

            dumps = named_dumps(path, text)
        builder = None
        if dumps:
            from podlife.importer import command as imported

            dump = imported.read(dumps)
            sc = imported.scenario(dump, path, list(overrides), kubernetes_version=kubernetes_version, seed=seed,
                                   until=until, text=text)
            builder = imported.builder(dump)
        else:
            sc = load_scenario(path, list(overrides), kubernetes_version=kubernetes_version, seed=seed,
                               until=until, text=text, sources=sources)
        for w in sc.warnings:
            click.echo(f"warning: {w}", err=True)
        instants = _instants(at)
        extend = imported.extender(dump) if dumps else None
        writer = ReportWriter(sc, outputs, extend=extend)
        options = writer.run_options()
        if builder is not None:   # an imported cluster's; otherwise run's default
            options["builder"] = builder
        result = run_scenario(sc, instants, **options)
        writer.finish(result)
    sys.exit(0 if result.passed else 1)


def _instants(at: str | None) -> list[float]:
    from podlife.scenario.durations import parse_duration
    from podlife.scenario.errors import ScenarioError

    out = []
    for part in (at.split(",") if at else []):
        try:
            t = parse_duration(part.strip())
        except ValueError as e:
            raise ScenarioError("--at", None, "", str(e)) from None
        if t < 0:
            raise ScenarioError("--at", None, "", f"{part.strip()!r} is before the start")
        out.append(t)
    return out


@main.command("import")
@click.argument("dumps", nargs=-1, required=True)
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False),
              help="Write the cleaned cluster here (one YAML List; run --from and up --from read it).")
@click.option("--namespace", "namespaces", multiple=True, help="Keep only this namespace's objects (and the "
                                                              "cluster-scoped ones). Repeatable.")
@click.option("--selector", "-l", help="Keep only namespaced objects whose labels match (e.g. app=web).")
@click.option("--anonymize", is_flag=True, help="Rename namespaces, workloads, pods, nodes and images "
                                                "consistently, to share a reproduction.")
@click.option("--calibrate", "events", type=click.Path(), help="Events (kubectl get events -A -o json, or the "
                                                               "dump's events.json) to take image pull times from.")
def import_cmd(dumps: tuple[str, ...], out: str | None, namespaces: tuple[str, ...], selector: str | None,
               anonymize: bool, events: str | None) -> None:
    """Read DUMP... (kubectl get nodes,pods,... -A -o yaml|json; files, a directory, or kubectl cluster-info dump
    --output-directory), check and clean it, and write the cluster podlife starts from. The kubectl command that
    makes a dump podlife restores whole is in the README ("Your cluster")."""
    from podlife.importer import command as imported

    with user_input(dumps[0]):
        dump = imported.read(dumps, namespaces, selector, anonymize, events)
        for w in dump.warnings:
            click.echo(f"warning: {w}", err=True)
        for line in imported.describe(dump):
            click.echo(line)
        if out:
            imported.write(dump, out)
            click.echo(f"wrote {out}")


@main.command("report")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--html", "html_path", type=click.Path(dir_okay=False), required=True,
              help="Write the timeline as one self-contained HTML page.")
def report_cmd(trace: str, html_path: str) -> None:
    """Draw a saved trace report (from run --report) as HTML."""
    from podlife.report.saved import SavedReportError, draw_html

    try:
        draw_html(trace, html_path)
    except SavedReportError as e:
        click.echo(str(e), err=True)
        sys.exit(2)


def _against(value: str) -> dict[str, object]:
    """One ``--against`` value: a scenario file, ``seed=N``, ``PATH=VALUE`` (as --set) or a version."""
    if value.endswith((".yaml", ".yml")) or os.path.sep in value:
        return {"scenario": value}
    if value.startswith("seed="):
        return {"seed": value[len("seed="):]}
    if "=" in value:
        return {"set": value}
    return {"kubernetes_version": value}


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--against", "against", multiple=True, required=True,
              metavar="VERSION|seed=N|PATH=VALUE|FILE",
              help="What the second run changes: a Kubernetes version, a seed, a field (as --set) or another "
                   "scenario file. May be repeated.")
@click.option("--kubernetes-version", help="Kubernetes minor version of the first run.")
@click.option("--seed", type=int, help="Random seed of the first run.")
@click.option("--until", help="Simulated time limit (Go duration) for both runs.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a field in both runs.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Draw both timelines, aligned on one time axis, as one HTML page.")
@click.option("--from", "dumps", multiple=True, metavar="DUMP",
              help="Run both on the cluster of this dump (as run --from). Repeatable.")
def diff(scenario: str, against: tuple[str, ...], kubernetes_version: str | None, seed: int | None,
         until: str | None, overrides: tuple[str, ...], html_path: str | None, dumps: tuple[str, ...]) -> None:
    """Run SCENARIO twice and show where the timelines part (exit 0: no difference, 1: they differ)."""
    from podlife.report.diff import Side, compare, render_lines
    from podlife.report.outputs import ReportWriter
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run as run_scenario
    from podlife.scenario.yamlread import read_text

    second_sets: list[object] = list(overrides)
    second: dict[str, object] = {"scenario": scenario, "kubernetes_version": kubernetes_version, "seed": seed,
                                 "set": second_sets}
    for value in against:
        for k, v in _against(value).items():
            if k == "set":
                second_sets.append(v)
            elif k == "seed":
                try:
                    second["seed"] = int(str(v))
                except ValueError:
                    click.echo(f"--against: {value!r}: seed must be an integer", err=True)
                    sys.exit(2)
            else:
                second[k] = v

    def side(path: str, sets: list[str], version: str | None, sd: int | None) -> Side:
        from podlife.importer.declared import named_dumps

        try:
            files = dumps or named_dumps(path, read_text(path))
        except OSError:
            files = ()   # load_scenario says why it cannot be read
        if files:
            from podlife.importer import command as imported

            dump = imported.read(files)   # each side its own copy: a run keeps the objects it is given
            sc = imported.scenario(dump, path, sets, kubernetes_version=version, seed=sd, until=until)
            writer = ReportWriter(sc, extend=imported.extender(dump))
            rep = writer.finish(run_scenario(sc, **writer.run_options(), builder=imported.builder(dump)))
            return Side(f"{rep['kubernetesVersion']}", rep)
        sc = load_scenario(path, sets, kubernetes_version=version, seed=sd, until=until)
        writer = ReportWriter(sc)
        rep = writer.finish(run_scenario(sc, **writer.run_options()))
        return Side(f"{rep['kubernetesVersion']}", rep)

    with user_input(scenario):
        a = side(scenario, list(overrides), kubernetes_version, seed)
        b = side(str(second["scenario"]), second["set"], second["kubernetes_version"],  # type: ignore[arg-type]
                 second["seed"])  # type: ignore[arg-type]
    if a.label == b.label:  # the versions agree: name the sides by what differs
        a.label, b.label = "first run", "second run"
        if second["seed"] != seed:
            a.label, b.label = f"seed {a.report['seed']}", f"seed {b.report['seed']}"
        elif second["scenario"] != scenario:
            a.label, b.label = scenario, str(second["scenario"])
    d = compare(a, b)
    lines = render_lines(d)
    if dumps:
        from podlife.importer.whatif import compare_lines

        lines += compare_lines(a.label, a.report.get("whatIf"), b.label, b.report.get("whatIf"))
    for line in lines:
        click.echo(line)
    if html_path:
        from podlife.report.html import render_diff
        from podlife.report.outputs import write_text

        with user_input(html_path):
            write_text(html_path, render_diff(a.report, b.report, a.label, b.label, lines))
    sys.exit(0 if d.identical else 1)


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--pod", required=True, help="The pod to explain (name, namespace/name or Pod/namespace/name).")
@click.option("--at", "at", help="The moment to explain (Go duration); default: the pod's removal or last record.")
@click.option("--until", help="Simulated time limit (Go duration), overriding the scenario's.")
@click.option("--kubernetes-version", help="Kubernetes minor version, overriding the scenario's.")
@click.option("--seed", type=int, help="Random seed, overriding the scenario's.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field.")
def explain(scenario: str, pod: str, at: str | None, until: str | None, kubernetes_version: str | None,
            seed: int | None, overrides: tuple[str, ...]) -> None:
    """Run SCENARIO and walk back from a moment of POD through its recorded causes."""
    from podlife.report.explain import ExplainError, explain as explain_pod, render_lines
    from podlife.report.outputs import ReportWriter
    from podlife.scenario.durations import parse_duration
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run as run_scenario

    try:
        moment = parse_duration(at) if at is not None else None
    except ValueError as e:
        click.echo(f"--at: {e}", err=True)
        sys.exit(2)
    with user_input(scenario):
        sc = load_scenario(scenario, list(overrides), kubernetes_version=kubernetes_version, seed=seed,
                           until=until)
        writer = ReportWriter(sc)
        rep = writer.finish(run_scenario(sc, **writer.run_options()))
    if moment is not None and moment > rep["endSeconds"]:
        from podlife.scenario.durations import format_duration

        click.echo(f"--at: {at} is after the run's end ({format_duration(rep['endSeconds'])}); expected a moment of "
                   "the run (or --until to make it longer)", err=True)
        sys.exit(2)
    try:
        obj, target, steps = explain_pod(rep, pod, moment)
    except ExplainError as e:
        click.echo(f"--pod: {e}", err=True)
        sys.exit(2)
    for line in render_lines(obj, target, steps):
        click.echo(line)


@main.command()
@click.argument("evidence", nargs=-1, required=True, type=click.Path(exists=False))
@click.option("--pod", help="The pod to diagnose (namespace/name or name); default: every pod the evidence names.")
@click.option("--kubernetes-version", help="The cluster's version, when the kubelet log's start-up lines do not "
                                           "say it.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Also draw the real and modelled timelines on one axis as an HTML page.")
def diagnose(evidence: tuple[str, ...], pod: str | None, kubernetes_version: str | None,
             html_path: str | None) -> None:
    """Explain an incident from its EVIDENCE (kubelet logs, kubectl get events/pod -o json|yaml, kubectl
    describe pod output, a kubectl cluster-info dump directory) against the model: rank the faults and
    behaviours that reproduce it (exit 0), or say that none fits (exit 1)."""
    from podlife.diagnose import diagnose as run_diagnosis
    from podlife.diagnose.render import render
    from podlife.versions import MODELLED_VERSIONS, normalize_version

    if kubernetes_version is not None:   # checked here, or the error names the scenario diagnose writes
        kubernetes_version = normalize_version(kubernetes_version)
        if kubernetes_version not in MODELLED_VERSIONS:
            click.echo(f'--kubernetes-version: "{kubernetes_version}" is not a modelled version; expected a minor '
                       f'version, one of "{MODELLED_VERSIONS[0]}" … "{MODELLED_VERSIONS[-1]}"', err=True)
            sys.exit(2)
    with user_input(evidence[0]):
        ev, d = run_diagnosis(list(evidence), pod, kubernetes_version)
        for line in render(ev, d):
            click.echo(line)
        if html_path:
            from podlife.diagnose.html import page

            with open(html_path, "w", encoding="utf-8") as f:
                f.write(page(ev, d))
    sys.exit(0 if d.fits else 1)


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--vary", "varies", multiple=True, required=True, metavar="KEY=A..B|KEY=a,b,c",
              help="A value to vary: kubernetesVersion=1.25..1.34, seed=0..999, or a field path (as --set) "
                   "with a list, e.g. spec.objects[0].spec.terminationGracePeriodSeconds=5,10,30.")
@click.option("--sample", type=int, help="Run this many points drawn from the cross product (seeded).")
@click.option("--sample-seed", type=int, default=0, show_default=True, help="Seed of the --sample draw.")
@click.option("--workers", type=int, help="Worker processes (default: every core of this machine).")
@click.option("--cluster", help="Address of an existing Dask scheduler (tcp://HOST:PORT) to run on.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Write the table (.csv or .parquet).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Draw the sweep as an HTML page.")
@click.option("--until", help="Simulated time limit (Go duration) for every point.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a field in every point.")
def sweep(scenario: str, varies: tuple[str, ...], sample: int | None, sample_seed: int, workers: int | None,
          cluster: str | None, out_path: str | None, html_path: str | None, until: str | None,
          overrides: tuple[str, ...]) -> None:
    """Run SCENARIO at every point of the --vary values and collect one row per point."""
    from rich.console import Console
    from rich.progress import Progress

    from podlife.report.outputs import write_text
    from podlife.scenario.load import load_scenario
    from podlife.sweep import engine, output
    from podlife.sweep.points import SEED_KEY, VERSION_KEY, VaryError, parse_vary, points as make_points

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    try:
        vs = [parse_vary(v) for v in varies]
        pts = make_points(vs, sample, sample_seed)
    except VaryError as e:
        click.echo(f"--vary: {e}", err=True)
        sys.exit(2)
    if workers is not None and workers < 1:
        click.echo("--workers: expected a positive number", err=True)
        sys.exit(2)
    if out_path and not out_path.endswith((".csv", ".parquet")):
        click.echo(f"--out: {out_path}: expected a .csv or .parquet file", err=True)
        sys.exit(2)
    first = pts[0]
    with user_input(scenario):  # the first point must load: bad input is the user's, before any worker starts
        load_scenario(scenario, list(overrides) + [f"{k}={v}" for k, v in first.items()
                                                   if k not in (VERSION_KEY, SEED_KEY)],
                      kubernetes_version=first.get(VERSION_KEY), seed=first.get(SEED_KEY), until=until)
    keys = [v.key for v in vs]
    try:
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(f"{len(pts)} points", total=len(pts))
            # after a Ctrl-C a later one is ignored to the end of the process, as during run_points' shutdown:
            # raised while the rows are written, click would end the command with "Aborted!" (exit 1) and no
            # table; raised while the interpreter shuts down, it would die of the signal
            rows, interrupted = engine.run_points(scenario, list(overrides), pts, until, workers, cluster,
                                                  progress=lambda done: bar.update(task, completed=done),
                                                  hold_sigint=True)
    except engine.ClusterError as e:
        click.echo(f"--cluster: {e}", err=True)
        sys.exit(2)
    done = [r for r in rows if r is not None]
    cols = output.columns(done, keys)
    if out_path:
        output.write(out_path, done, cols)
    if html_path:
        write_text(html_path, output.render_html(done, keys, f"podlife sweep: {scenario}"))
    output.summarise(console, done, keys)
    errors = sum(r["exit"] >= 2 for r in done)
    console.print(f"{len(done)} of {len(pts)} points ran" + (" (interrupted)" if interrupted else "")
                  + f"; {sum(r['exit'] == 0 for r in done)} passed every expectation, "
                  + f"{sum(r['exit'] == 1 for r in done)} failed one, {errors} could not run")
    sys.exit(130 if interrupted else 0)


def _given(param: str) -> bool:
    """The user set this option (on the command line or from the environment), rather than its default."""
    from click.core import ParameterSource

    source = click.get_current_context().get_parameter_source(param)
    return source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


@main.command()
@click.argument("cluster", required=False, type=click.Path(dir_okay=False))
@click.option("--kubernetes-version", help="Kubernetes version of the cluster (1.32, v1.32 or 1.32.4).")
@click.option("--port", type=int, default=6443, show_default=True, help="Port to serve on (0: any free port).")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Address to serve on; any but loopback is served with TLS and a bearer token.")
@click.option("--clock", "clock", type=click.Choice(["realtime", "manual"]), default="realtime", show_default=True,
              help="realtime: time follows the wall clock (times --speed); manual: only podlife advance moves it.")
@click.option("--speed", type=float, default=1.0, show_default=True, help="Realtime clock: simulated seconds per "
                                                                          "wall-clock second.")
@click.option("--kubeconfig", default="~/.podlife/kubeconfig", show_default=True,
              help="Where to write the kubeconfig for kubectl and client libraries.")
@click.option("--seed", type=int, help="Random seed, overriding the cluster file's.")
@click.option("--tls", is_flag=True, help="Serve with TLS and a bearer token on a loopback address too.")
@click.option("--runtime", type=click.Choice(["simulated", "process"]), default="simulated", show_default=True,
              help="simulated: containers follow their modelled behaviour; process: they run as local processes "
                   "(their command and args), with real signals, logs, hooks and probes.")
@click.option("--data-dir", default="~/.podlife/data", show_default=True, type=click.Path(file_okay=False),
              help="Where the cluster's state (SQLite), trace, lock and (--runtime process) pods' directories and "
                   "logs are kept; a directory that holds a cluster is restarted.")
@click.option("--ephemeral", is_flag=True, help="Keep nothing: the state lives in memory and ends with the process.")
@click.option("--durable", is_flag=True, help="fsync every commit (SQLite synchronous=FULL): writes survive a power "
                                              "loss too, not only the process being killed.")
@click.option("--detach", is_flag=True, help="Run in the background: return once the API is served (exit 0), or "
                                             "with the server's exit status if it could not start.")
@click.option("--from", "dumps", multiple=True, metavar="DUMP",
              help="Serve the cluster of this dump (as run --from), from the instant it was taken; its state is "
                   "kept in memory (not with --data-dir or --durable). Repeatable.")
def up(cluster: str | None, kubernetes_version: str | None, port: int, address: str, clock: str, speed: float,
       kubeconfig: str, seed: int | None, tls: bool, runtime: str, data_dir: str, ephemeral: bool, durable: bool,
       detach: bool, dumps: tuple[str, ...]) -> None:
    """Start a live cluster (CLUSTER: a scenario whose spec.cluster it runs; default 3 nodes) and serve the
    Kubernetes API for kubectl, client libraries and operators. Ctrl-C or podlife down stops it."""
    import asyncio
    import logging
    import signal

    from podlife.apiserver.up import UpConfig, build_cluster, detached, remove_temporary, serve

    if not speed > 0:
        click.echo(f"--speed: expected a positive number, got {speed}", err=True)
        sys.exit(2)
    if not 0 <= port <= 65535:
        click.echo(f"--port: expected 0 … 65535, got {port}", err=True)
        sys.exit(2)
    if runtime == "process" and (clock != "realtime" or speed != 1):
        # real processes live on the wall clock: a frozen or faster model clock would misstate their timing
        got = "--clock manual" if clock != "realtime" else f"--speed {speed:g}"
        click.echo(f"--runtime process: real processes run on the wall clock, so the cluster's clock must be too: "
                   f"expected --clock realtime --speed 1, got {got}", err=True)
        sys.exit(2)
    if ephemeral and durable:
        click.echo("--durable: nothing is written with --ephemeral", err=True)
        sys.exit(2)
    if dumps and (durable or _given("data_dir")):
        # the imported cluster is not written to a data directory: a restart would lose it, so none is taken
        flag = "--durable" if durable else "--data-dir"
        click.echo(f"{flag}: up --from keeps the imported cluster in memory only (it is not written to a data "
                   f"directory, and ends with the process); drop {flag}", err=True)
        sys.exit(2)
    if detach:
        sys.exit(detached([a for a in sys.argv[1:] if a != "--detach"], None if ephemeral or dumps else data_dir,
                          kubeconfig, out=click.echo))
    cfg = UpConfig(cluster, kubernetes_version, address, port, clock, speed, kubeconfig, seed, tls, runtime=runtime,
                   data_dir=None if ephemeral or dumps else data_dir, durable=durable, dumps=dumps)

    def terminated(signum: int, frame: object) -> None:
        raise KeyboardInterrupt   # SIGTERM while starting: the same way out as Ctrl-C, temporary files removed
    signal.signal(signal.SIGTERM, terminated)
    try:
        with user_input(cluster or (dumps[0] if dumps else "--kubernetes-version")):
            built = build_cluster(cfg)
        if built.process_host is not None and built.process_host.in_use():
            click.echo(f"--data-dir: {cfg.data_dir} is in use by another podlife up (its process supervisor, pid "
                       f"{built.process_host.in_use()}, runs)", err=True)
            sys.exit(2)
        for w in cfg.warnings:
            click.echo(f"warning: {w}", err=True)
        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
        try:
            asyncio.run(serve(cfg, built, out=lambda line: click.echo(line)))
        except OSError as e:
            click.echo(f"--port: cannot serve on {address}:{port}: {e.strerror or e}", err=True)
            sys.exit(2)
    except KeyboardInterrupt:
        pass
    finally:
        remove_temporary(cfg)


def _endpoint(kubeconfig: str | None):
    from podlife.apiserver.client import ClientError, Endpoint

    try:
        return Endpoint.from_kubeconfig(kubeconfig)
    except ClientError as e:
        click.echo(str(e), err=True)
        sys.exit(2)


@main.command()
@click.argument("duration", required=False)
@click.option("--until", "until", metavar="CONDITION",
              help="Move to the first instant CONDITION holds, e.g. 'pod/web-0 condition Ready' (an expect: check "
                   "on one line; README: podlife advance --until).")
@click.option("--timeout", metavar="DURATION", help="With --until: give up this far on (exit 1); default 1h.")
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
def advance(duration: str | None, until: str | None, timeout: str | None, kubeconfig: str | None) -> None:
    """Move the manual clock of a running podlife up forward by DURATION (Go duration: 30s, 5m, 1h30m), or to the
    instant --until CONDITION holds (exit 1 if it does not within --timeout)."""
    from urllib.parse import urlencode

    from podlife.apiserver.client import ClientError
    from podlife.scenario.durations import parse_duration

    if (duration is None) == (until is None):
        click.echo("advance: expected DURATION or --until CONDITION (one of them)", err=True)
        sys.exit(2)
    if timeout is not None and until is None:
        click.echo("--timeout: only with --until", err=True)
        sys.exit(2)
    for name, text in (("DURATION", duration), ("--timeout", timeout)):
        try:
            if text is not None and parse_duration(text) < 0:
                raise ValueError(f'"{text}" is negative; expected a duration of zero or more, e.g. 5m')
        except ValueError as e:
            click.echo(f"{name}: {e}", err=True)
            sys.exit(2)
    query = {"by": duration} if duration is not None else {"until": until, **({"timeout": timeout} if timeout else {})}
    ep = _endpoint(kubeconfig)
    try:
        state = ep.call("POST", f"/podlife/advance?{urlencode(query)}", timeout=None)
    except ClientError as e:
        click.echo(str(e), err=True)
        sys.exit(2 if "until:" in str(e) else 1)
    if until is None:
        click.echo(f"clock at {state['seconds']:g}s")
    elif state["held"]:
        click.echo(f"clock at {state['seconds']:g}s: {until}")
    else:
        click.echo(f"clock at {state['seconds']:g}s: {until} did not hold within {timeout or '1h'}", err=True)
        sys.exit(1)


@main.command()
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
def down(kubeconfig: str | None) -> None:
    """Stop a running podlife up, as Ctrl-C does (its state stays in its data directory)."""
    import time

    from podlife.apiserver.client import ClientError

    ep = _endpoint(kubeconfig)
    try:
        ep.call("POST", "/podlife/stop")
    except ClientError as e:
        click.echo(str(e), err=True)
        sys.exit(1)
    for _ in range(200):   # until it no longer answers
        try:
            ep.call("GET", "/podlife/clock")
        except ClientError:
            click.echo("podlife: stopped")
            return
        time.sleep(0.05)
    click.echo("podlife down: the server was asked to stop but still answers after 10 s", err=True)
    sys.exit(1)


@main.command()
@click.argument("fault_type", metavar="TYPE")
@click.option("--node", help="The node the fault happens on.")
@click.option("--pod", help="namespace/name of the pod (OOMKill, ContainerHang, LostExitEvent).")
@click.option("--container", help="The container (OOMKill, ContainerHang, LostExitEvent).")
@click.option("--image", help="The image (ImagePullFailure).")
@click.option("--value", help="A quantity (MemoryUsage, DiskUsage).")
@click.option("--for", "for_", metavar="DURATION", help="Heal after this long (simulated time).")
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
def fault(fault_type: str, node: str | None, pod: str | None, container: str | None, image: str | None,
          value: str | None, for_: str | None, kubeconfig: str | None) -> None:
    """Inject a fault into a running podlife up, as a scenario's fault action does (same types and fields)."""
    from podlife.apiserver.client import ClientError

    spec = {k: v for k, v in (("type", fault_type), ("node", node), ("pod", pod), ("container", container),
                              ("image", image), ("value", value), ("for", for_)) if v is not None}
    ep = _endpoint(kubeconfig)
    try:
        state = ep.call("POST", "/podlife/faults", spec)
    except ClientError as e:
        click.echo(str(e), err=True)
        sys.exit(2 if ": fault" in str(e) else 1)
    click.echo(f"{fault_type} started at {state['seconds']:g}s")


@main.command()
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
@click.option("--follow/--no-follow", "-f", default=True, show_default=True,
              help="Keep streaming new records.")
def trace(kubeconfig: str | None, follow: bool) -> None:
    """Stream the trace records of a running podlife up (one JSON record per line, the report's format)."""
    from podlife.apiserver.client import ClientError

    ep = _endpoint(kubeconfig)
    try:
        with ep.open("GET", f"/podlife/trace?follow={'true' if follow else 'false'}", timeout=None) as resp:
            for line in resp:
                sys.stdout.write(line.decode())
                sys.stdout.flush()
    except ClientError as e:
        click.echo(str(e), err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        pass


@main.group()
def snapshot() -> None:
    """Keep and restore the whole state of a running podlife up (--clock manual --ephemeral): store, clock,
    controllers, kubelets and random generators."""


@snapshot.command("save")
@click.argument("name")
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
def snapshot_save(name: str, kubeconfig: str | None) -> None:
    """Keep the cluster's state as NAME (replacing a snapshot of that name)."""
    click.echo(f"snapshot {name} saved at {_snapshot_call(kubeconfig, 'save', name)['seconds']:g}s")


@snapshot.command("restore")
@click.argument("name")
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
def snapshot_restore(name: str, kubeconfig: str | None) -> None:
    """Go back to snapshot NAME (it stays, to be restored again); clients' open connections are closed."""
    click.echo(f"snapshot {name} restored: clock at {_snapshot_call(kubeconfig, 'restore', name)['seconds']:g}s")


@snapshot.command("list")
@click.option("--kubeconfig", help="The kubeconfig podlife up wrote (default $KUBECONFIG, else ~/.podlife/kubeconfig).")
def snapshot_list(kubeconfig: str | None) -> None:
    """The snapshots of the running cluster: name and clock."""
    for s in _snapshot_call(kubeconfig, "list")["snapshots"]:
        click.echo(f"{s['name']}\t{s['seconds']:g}s")


def _snapshot_call(kubeconfig: str | None, what: str, name: str = "") -> dict:
    """save / restore / list over the endpoints of podlife.apiserver.snapshots."""
    from urllib.parse import quote, urlencode

    from podlife.apiserver.client import ClientError

    method, path = {"save": ("POST", f"/podlife/snapshots?{urlencode({'name': name})}"),
                    "restore": ("POST", f"/podlife/snapshots/{quote(name)}/restore"),
                    "list": ("GET", "/podlife/snapshots")}[what]
    ep = _endpoint(kubeconfig)
    try:
        return ep.call(method, path)
    except ClientError as e:
        click.echo(str(e), err=True)
        sys.exit(2 if "name:" in str(e) or "not found" in str(e) else 1)


@main.command()
def versions() -> None:
    """List the modelled Kubernetes versions, the behaviour that differs between them and the feature gates that
    switch it (spec.cluster.featureGates)."""
    from podlife import features
    from podlife.report import plaintable
    from podlife.versions import MODELLED_VERSIONS, NEWEST_MINOR, OLDEST_MINOR, describe

    head = f"Modelled Kubernetes versions: {MODELLED_VERSIONS[0]} … {MODELLED_VERSIONS[-1]}"
    columns = ("rule", "versions", "behaviour", "feature gate", "upstream")
    rows = describe()
    gate_columns = ("feature gate", "versions", "stage, default", "upstream")
    gate_title = "Feature gates a scenario may set (spec.cluster.featureGates, kubelet.featureGates)"
    gate_rows = features.describe(OLDEST_MINOR, NEWEST_MINOR)
    width = plaintable.plain_width(sys.stdout)
    if width is not None:   # plain text: rich's layout without rich (0.2 s of rich for 1,750 lines)
        parts = (plaintable.line(head, width), plaintable.render(columns, rows, width),
                 plaintable.render(gate_columns, gate_rows, width, title=gate_title))
        if None not in parts:
            sys.stdout.write("".join(p for p in parts if p is not None))
            return
    from rich.console import Console

    console = Console()
    console.print(head)
    styles = plaintable.terminal_styles(console)
    if styles is not None:   # a terminal: rich's styles, from rich, on the same layout
        tables = (plaintable.render(columns, rows, console.width, styles=styles),
                  plaintable.render(gate_columns, gate_rows, console.width, title=gate_title, styles=styles))
        if None not in tables:
            console.file.write("".join(t for t in tables if t is not None))
            console.file.flush()
            return
    from rich.table import Table

    table = Table(*columns)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    gates = Table(*gate_columns, title=gate_title)
    for gate_row in gate_rows:
        gates.add_row(*gate_row)
    console.print(gates)

if __name__ == "__main__":
    entry()
