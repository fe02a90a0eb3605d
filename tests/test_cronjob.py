"""The CronJob controller: schedule times, Job names, concurrency policies, deadlines, history limits."""

from __future__ import annotations

from tests.helpers import records, run_text


def scenario(start: str, cron: str, version: str = "1.34", until: str = "5m", api: str = "batch/v1",
             command: str = "[sh, -c, 'echo done']") -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: cron}}
spec:
  kubernetesVersion: "{version}"
  startTime: "{start}"
  until: {until}
  behaviors:
  - {{container: slow, behavior: {{exitAfterSeconds: 100}}}}
  objects:
  - apiVersion: {api}
    kind: CronJob
    metadata: {{name: report}}
    spec:
{cron}
      jobTemplate:
        metadata: {{labels: {{app: report}}}}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{{name: work, image: busybox, command: {command}}}]
"""


def cron_events(r) -> list[tuple[float, str, str]]:
    return [(e["t"], e["reason"], e["message"]) for e in records(r, "event") if e["object"] == "CronJob/default/report"]


def test_every_minute_with_history_limit(tmp_path):
    # v2: requeued for the next time + 100 ms (nextScheduleDelta). Start 00:00:30 → the times are t = 30, 90, ...
    # Names: NAME-<unix minutes>: 2025-01-01T00:01:00Z = 1735689660 s = 28928161 min. Each Job's pod runs 1 s
    # (the defaults: a shell command of a Never pod completes in 1 s) and the Job completes at +3 s; with
    # successfulJobsHistoryLimit 2 the third completion deletes the oldest (cleanupFinishedJobs runs first).
    r = run_text(tmp_path, scenario("2025-01-01T00:00:30Z", "      schedule: '* * * * *'\n"
                                                             "      successfulJobsHistoryLimit: 2"))
    created = [(x["t"], x["object"]) for x in records(r, "api", verb="create", by="cronjob-controller")]
    assert created == [(30.1, "Job/default/report-28928161"), (90.1, "Job/default/report-28928162"),
                       (150.1, "Job/default/report-28928163"), (210.1, "Job/default/report-28928164"),
                       (270.1, "Job/default/report-28928165")]
    events = cron_events(r)
    assert events[:3] == [(30.1, "SuccessfulCreate", "Created job report-28928161"),
                          (33.1, "SawCompletedJob", "Saw completed job: report-28928161, condition: Complete"),
                          (90.1, "SuccessfulCreate", "Created job report-28928162")]
    assert (153.1, "SuccessfulDelete", "Deleted job report-28928161") in events
    cj = r.cluster.store.get("CronJob", "default", "report")
    assert cj["status"]["lastScheduleTime"] == "2025-01-01T00:05:00Z"
    assert cj["status"]["lastSuccessfulTime"] == "2025-01-01T00:05:03Z"
    job = r.cluster.store.get("Job", "default", "report-28928165")
    assert job["metadata"]["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                              "2025-01-01T00:05:00Z"}
    assert job["metadata"]["labels"]["app"] == "report"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"


def test_v1_controller_polls_every_10_seconds(tmp_path):
    # through 1.20: syncAll every 10 s from the controller's start; 00:01:00 is t = 30, on the grid;
    # batch/v1beta1 is the served version; "status:" in the completion event (PR #75712); no annotation
    r = run_text(tmp_path, scenario("2025-01-01T00:00:25Z", "      schedule: '* * * * *'", version="1.20",
                                    until="100s", api="batch/v1beta1"))
    created = [x["t"] for x in records(r, "api", verb="create", by="cronjob-controller")]
    assert created == [40.0]   # 00:01:00 = t 35, seen at the 40 s pass
    assert (50.0, "SawCompletedJob", "Saw completed job: report-28928161, status: Complete") in cron_events(r)
    assert "annotations" not in r.cluster.store.get("Job", "default", "report-28928161")["metadata"]


def test_starting_deadline_missed_by_the_v1_poll(tmp_path):
    # the times are t = 23 and 83 (00:01:00, 00:02:00); the 10 s passes see them 7 s late. With
    # startingDeadlineSeconds 5 the unmet times are counted from now - 5 s (getRecentUnmetScheduleTimes), so both
    # are silently skipped: no Job, and no MissSchedule event either
    r = run_text(tmp_path, scenario("2025-01-01T00:00:37Z", "      schedule: '* * * * *'\n"
                                                             "      startingDeadlineSeconds: 5",
                                    version="1.20", until="100s", api="batch/v1beta1"))
    assert records(r, "api", verb="create", by="cronjob-controller") == []
    assert cron_events(r) == []
    # with 10 s of deadline the same passes start both
    r = run_text(tmp_path, scenario("2025-01-01T00:00:37Z", "      schedule: '* * * * *'\n"
                                                             "      startingDeadlineSeconds: 10",
                                    version="1.20", until="100s", api="batch/v1beta1"))
    assert [x["t"] for x in records(r, "api", verb="create", by="cronjob-controller")] == [30.0, 90.0]


def test_forbid_skips_while_a_job_runs_and_replace_deletes_it(tmp_path):
    forbid = run_text(tmp_path, scenario("2025-01-01T00:00:30Z", "      schedule: '* * * * *'\n"
                                                                  "      concurrencyPolicy: Forbid", until="100s")
                      .replace("name: work", "name: slow"))
    assert [e[:2] for e in cron_events(forbid)] == [(30.1, "SuccessfulCreate"), (90.1, "JobAlreadyActive")]
    replace = run_text(tmp_path, scenario("2025-01-01T00:00:30Z", "      schedule: '* * * * *'\n"
                                                                   "      concurrencyPolicy: Replace", until="100s")
                       .replace("name: work", "name: slow"))
    assert cron_events(replace) == [(30.1, "SuccessfulCreate", "Created job report-28928161"),
                                    (90.1, "SuccessfulDelete", "Deleted job report-28928161"),
                                    (90.1, "SuccessfulCreate", "Created job report-28928162")]


def test_time_zone(tmp_path):
    # 09:00 in Paris on 1 January is 08:00 UTC: t = 60 from 07:59 UTC, + 100 ms
    r = run_text(tmp_path, scenario("2025-01-01T07:59:00Z", "      schedule: '0 9 * * *'\n"
                                                             "      timeZone: Europe/Paris", until="2m"))
    assert [(x["t"], x["object"]) for x in records(r, "api", verb="create", by="cronjob-controller")] == [
        (60.1, "Job/default/report-28928640")]   # 2025-01-01T08:00:00Z = 1735718400 s = 28928640 min


def test_time_zone_is_ignored_while_its_gate_is_off(tmp_path):
    # 1.24: CronJobTimeZone alpha and off, the field is dropped: 09:00 is read in UTC (t = 3660 from 07:59)
    r = run_text(tmp_path, scenario("2025-01-01T07:59:00Z", "      schedule: '0 9 * * *'\n"
                                                             "      timeZone: Europe/Paris", version="1.24",
                                    until="2h"))
    assert [x["t"] for x in records(r, "api", verb="create", by="cronjob-controller")] == [3660.1]
