"""Cron schedules as robfig/cron v3 ParseStandard reads them: shared by CronJob validation
(pkg/apis/batch/validation: ValidateCronJob) and the CronJob controller (pkg/controller/cronjob), as upstream
shares the library; the arithmetic of the times is cronsim's."""

from __future__ import annotations

from datetime import datetime

# robfig/cron ParseStandard's descriptors
_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


def _question_as_star(text: str) -> str:
    """robfig/cron v3 parser.go getRange: a range whose low end is ``?`` means ``*`` (every value, star bit set), in
    any field; cronsim knows no ``?``, so each such item is handed to it as ``*``."""
    fields = []
    for field in text.split():
        items = []
        for item in field.split(","):
            rng, slash, step = item.partition("/")
            low, dash, high = rng.partition("-")
            items.append(("*" if low == "?" else low) + dash + high + slash + step)
        fields.append(",".join(items))
    return " ".join(fields)


def parse_schedule(schedule: str) -> str:
    """The 5-field form of a schedule; ValueError with robfig/cron's complaint when it is not one."""
    text = _DESCRIPTORS.get(schedule.strip(), schedule.strip())
    if text.startswith("@"):
        raise ValueError(f"unrecognized descriptor: {schedule}")
    text = _question_as_star(text)
    from cronsim import CronSim, CronSimError  # on first use: most clusters have no CronJob

    try:
        CronSim(text, datetime(2000, 1, 1))
    except CronSimError as e:
        raise ValueError(str(e)) from None
    return text
