"""The Job controller (pkg/controller/job), one module per upstream file: controller (job_controller.go),
indexed (indexed_job_utils.go), policies (pod_failure_policy.go, success_policy.go), backoff
(backoff_utils.go)."""

from podlife.controlplane.controllers.job.backoff import BackoffRecord
from podlife.controlplane.controllers.job.controller import JobController, is_finished
from podlife.controlplane.controllers.job.policies import match_pod_failure_policy

__all__ = ["BackoffRecord", "JobController", "is_finished", "match_pod_failure_policy"]
