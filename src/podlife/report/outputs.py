"""What a command asks to be made of a run, and the making: the one way from a run to its report.

``Outputs`` names the requested outputs (``--report`` as JSON, or NDJSON written as the run goes; ``--klog``;
``--html``; the summary on standard output). ``ReportWriter`` opens what is written during the run, tells the
run how to record (``run_options``) and, once it has ended, assembles the report and writes the rest
(``finish``). ``podlife run`` asks for any of them; ``diff``, ``explain`` and ``sweep`` ask for none and use
the report it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podlife.report import stream
from podlife.report.assemble import Report, header, outcome, report
from podlife.trace.recorder import Batched

if TYPE_CHECKING:
    from podlife.scenario.model import Scenario
    from podlife.scenario.run import Result
    from podlife.trace.recorder import Record


@dataclass(frozen=True)
class Outputs:
    """What a run writes: the summary and the files asked for."""

    report: str | None = None   # JSON, or newline-delimited JSON when it ends in .ndjson or .jsonl
    klog: str | None = None
    html: str | None = None
    summary: bool = False       # print the human summary on standard output
    quiet: bool = False         # the summary prints only failed expectations
    trace_level: str = "full"   # which records the run makes (podlife.trace.recorder.LEVELS)

    def check(self) -> None:
        """Refuse outputs the trace level cannot make (before anything is read or run)."""
        from podlife.scenario.errors import ScenarioError

        if self.klog and self.trace_level != "full":
            raise ScenarioError("--klog", None, "", f"the component logs are not recorded at --trace "
                                                    f"{self.trace_level}; use --trace full")

    @property
    def streamed(self) -> bool:
        return stream.is_streamed(self.report)

    @property
    def keep(self) -> bool:
        """Whether the run keeps its records in memory: for a JSON report, the HTML page or the summary's
        timelines. A streamed run writes them as they are made and keeps none."""
        return self.trace_level != "summary" and (not self.streamed or self.html is not None)


class ReportWriter:
    def __init__(self, sc: Scenario, outputs: Outputs = Outputs(),
                 extend: Callable[[dict[str, Any], Result], None] | None = None) -> None:
        """``extend`` adds to the report (and a streamed report's outcome) what the run's cluster adds: an
        imported cluster's origin, assumptions and what-if answers (podlife.importer.command.extender)."""
        self.sc = sc
        self.outputs = outputs
        self.extend = extend
        self.sinks: list[Callable[[Record], None] | Batched] = []
        self._ndjson: stream.NdjsonReport | None = None
        self._klog: stream.KlogStream | None = None
        if outputs.streamed:
            self._ndjson = stream.NdjsonReport(outputs.report,  # type: ignore[arg-type]
                                               {**header(sc), "trace": outputs.trace_level})
            if outputs.trace_level != "summary":
                self.sinks.append(Batched(self._ndjson.records))
        if outputs.klog and not outputs.keep:
            self._klog = stream.KlogStream(outputs.klog, sc.start_time)
            self.sinks.append(Batched(self._klog.records))

    def run_options(self) -> dict[str, Any]:
        """The keywords of podlife.scenario.run.run that record what the outputs need."""
        return {"trace_level": self.outputs.trace_level, "keep_trace": self.outputs.keep, "sinks": self.sinks}

    def finish(self, result: Result) -> Report:
        """Write the outputs of the ended run; the report (without its records and final objects when they were
        streamed and not kept)."""
        out = self.outputs
        if self._klog is not None:
            self._klog.close()
        rep = report(result, final=self._ndjson is None)
        if self.extend is not None:
            self.extend(rep, result)
        if self._ndjson is not None:
            objects = result.cluster.store.iter_objects(encoded=True) if out.trace_level != "summary" else iter(())
            ending = outcome(result)
            if self.extend is not None:
                self.extend(ending, result)
            self._ndjson.finish(objects, ending)
        elif out.report:
            import orjson

            with open(out.report, "wb") as f:
                f.write(orjson.dumps(rep, option=orjson.OPT_INDENT_2) + b"\n")
        if out.klog and self._klog is None:
            from podlife.report import klog

            write_text(out.klog, klog.render(rep["records"], self.sc.start_time))
        if out.html:
            from podlife.report import html

            write_text(out.html, html.render(rep))
        if out.summary:
            print_summary(rep, out.quiet, result.pods_at)
            if not out.quiet and rep.get("whatIf"):   # a run on an imported cluster
                from podlife.importer.whatif import render_lines

                print("\n".join(render_lines(rep["whatIf"])))
        return rep


def print_summary(rep: Report, quiet: bool, tables: list[tuple[float, list[dict[str, Any]]]] | None = None) -> None:
    """The human summary on standard output (nothing for a quiet run that passed)."""
    from podlife.report import summary

    if not summary.is_silent(rep, quiet):
        from rich.console import Console

        summary.render(rep, Console(highlight=False), quiet=quiet, tables=tables)


def write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
