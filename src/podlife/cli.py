"""The ``podlife`` command."""

from __future__ import annotations

import os
import sys
import traceback

import click
import orjson
from rich.console import Console

from podlife import __version__


@click.group()
@click.version_option(__version__, prog_name="podlife")
def main() -> None:
    """Predict what Kubernetes does to a pod: run scenarios against a simulated cluster."""


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the trace report (JSON).")
@click.option("--klog", "klog_path", type=click.Path(dir_okay=False), help="Write the component logs as klog text.")
@click.option("--until", help="Simulated time limit (Go duration), overriding the scenario's.")
@click.option("--kubernetes-version", help="Kubernetes version (1.29, v1.29 or 1.29.3: the minor counts), "
                                           "overriding the scenario's.")
@click.option("--seed", type=int, help="Random seed, overriding the scenario's.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field.")
@click.option("--quiet", is_flag=True, help="Print only failed expectations.")
def run(scenario: str, report_path: str | None, klog_path: str | None, until: str | None,
        kubernetes_version: str | None, seed: int | None, overrides: tuple[str, ...], quiet: bool) -> None:
    """Run SCENARIO and print what happened."""
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import SUPPORTED_FAULTS, report, run as run_scenario
    from podlife.trace import klog, summary

    from podlife.versions import normalize_version

    console = Console(highlight=False)
    if kubernetes_version is not None:
        kubernetes_version = normalize_version(kubernetes_version)
    try:
        sc = load_scenario(scenario, list(overrides), kubernetes_version=kubernetes_version, seed=seed,
                           until=until, supported_faults=SUPPORTED_FAULTS)
        for w in sc.warnings:
            click.echo(f"warning: {w}", err=True)
        result = run_scenario(sc)
        rep = report(result)
        if report_path:
            with open(report_path, "wb") as f:
                f.write(orjson.dumps(rep, option=orjson.OPT_INDENT_2) + b"\n")
        if klog_path:
            with open(klog_path, "w", encoding="utf-8") as f:
                f.write(klog.render(rep["records"], sc.start_time))
        summary.render(rep, console, quiet=quiet)
    except ScenarioError as e:
        click.echo(str(e), err=True)
        sys.exit(2)
    except OSError as e:
        click.echo(f"{e.filename or scenario}: {e.strerror}", err=True)
        sys.exit(2)
    except Exception as e:  # noqa: BLE001 - an internal error must not look like bad input
        if os.environ.get("PODLIFE_DEBUG"):
            traceback.print_exc()
        click.echo(f"podlife: internal error: {type(e).__name__}: {e} (set PODLIFE_DEBUG=1 for details)",
                   err=True)
        sys.exit(3)
    sys.exit(0 if result.passed else 1)


@main.command()
def versions() -> None:
    """List the modelled Kubernetes versions and the behaviour that differs between them."""
    from rich.table import Table

    from podlife.versions import MODELLED_VERSIONS, describe

    console = Console()
    console.print(f"Modelled Kubernetes versions: {MODELLED_VERSIONS[0]} … {MODELLED_VERSIONS[-1]}")
    table = Table("rule", "versions", "behaviour", "upstream")
    for row in describe():
        table.add_row(*row)
    console.print(table)


if __name__ == "__main__":
    main()
