"""A report saved by ``podlife run --report`` (JSON or streamed), read back and checked for ``podlife report``:
bad input is a ``SavedReportError`` naming the file and what was expected, never a traceback."""

from __future__ import annotations

from podlife.report.assemble import FORMAT, Report


class SavedReportError(Exception):
    """The message names the file."""


def draw_html(path: str, html_path: str) -> None:
    """Read the report at ``path`` and write its timeline as an HTML page to ``html_path``."""
    import orjson

    try:
        rep = read(path)
        try:
            from podlife.report import html
            from podlife.report.outputs import write_text

            write_text(html_path, html.render(rep))
        except (KeyError, TypeError, ValueError, AttributeError) as e:   # a record missing what its type needs
            raise SavedReportError(f"{path}: records: not as podlife run --report writes them "
                                   f"({type(e).__name__}: {e})") from None
    except orjson.JSONDecodeError as e:
        raise SavedReportError(f"{path}: not JSON: {e}") from None
    except OSError as e:
        raise SavedReportError(f"{e.filename or path}: {e.strerror}") from None


def read(path: str) -> Report:
    """The report at ``path`` (a streamed one as its JSON form); SavedReportError if it is not one, OSError or
    orjson.JSONDecodeError if it cannot be read."""
    import orjson

    from podlife.report import stream

    with open(path, "rb") as f:
        data = f.read()
    if stream.is_streamed(path):
        try:
            rep = stream.read(data)
        except ValueError as e:
            raise SavedReportError(f"{path}: {e}") from None
    else:
        rep = orjson.loads(data)
    if not isinstance(rep, dict) or rep.get("format") != FORMAT:
        raise SavedReportError(f"{path}: format: expected a {FORMAT} report")
    problem = _problem(rep)
    if problem:
        raise SavedReportError(f"{path}: {problem}")
    return rep


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "scenario": str, "kubernetesVersion": str, "startTime": str, "endSeconds": (int, float), "records": list,
    "expectations": list}


def _problem(rep: Report) -> str | None:
    """What keeps a saved report from being drawn: a field missing or of the wrong type (section 4 of the
    scenario format), or a record without its time and type."""
    for key, kind in _FIELDS.items():
        if key not in rep:
            return f"{key}: required field missing; expected a report written by podlife run --report"
        if not isinstance(rep[key], kind) or isinstance(rep[key], bool):
            return f"{key}: expected {'a list' if kind is list else 'a number' if kind is not str else 'a string'}"
    for i, r in enumerate(rep["records"]):
        if not isinstance(r, dict) or not isinstance(r.get("t"), (int, float)) or not isinstance(r.get("type"), str):
            return f"records[{i}]: expected a record with a time t and a type"
    for i, v in enumerate(rep["expectations"]):
        if not isinstance(v, dict) or not {"description", "passed", "detail"} <= set(v):
            return f"expectations[{i}]: expected description, passed and detail"
    return None
