"""Indexed completion mode: pkg/controller/job/indexed_job_utils.go.

A pod's completion index is its batch.kubernetes.io/job-completion-index annotation; sets of indexes are kept
as ordered intervals and written as "1,3-5" (status.completedIndexes, status.failedIndexes, a successPolicy
rule's succeededIndexes). With backoffLimitPerIndex each pod carries batch.kubernetes.io/job-index-failure-count
(and job-index-ignored-failure-count), copied forward from the failed pod it replaces.
"""

from __future__ import annotations

from typing import Iterable

from podlife.api.meta import Obj

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"   # also the label's key (PodIndexLabel)
FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count"
INDEX_ENV = "JOB_COMPLETION_INDEX"
MAX_GENERATED_NAME_LENGTH = 58   # apiserver/pkg/storage/names: 63 - 5 random characters
MAX_INT32 = 2 ** 31 - 1

Intervals = list[tuple[int, int]]


def is_indexed(job: Obj) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def completion_index(pod: Obj) -> int:
    """getCompletionIndex: the annotation as a non-negative integer, else -1 (unknown)."""
    value = (pod["metadata"].get("annotations") or {}).get(INDEX_ANNOTATION)
    if not isinstance(value, str):
        return -1
    try:
        ix = int(value, 10)
    except ValueError:
        return -1
    return ix if ix >= 0 else -1


def parse(text: str | None, completions: int) -> Intervals:
    """parseIndexesFromString: intervals below ``completions`` (a corrupt part is skipped; adjacent ones
    merge)."""
    out: Intervals = []
    if not text:
        return out
    for part in text.split(","):
        limits = part.split("-")
        try:
            first = int(limits[0])
        except ValueError:
            continue
        if first >= completions:
            break
        last = first
        if len(limits) > 1:
            try:
                last = int(limits[1])
            except ValueError:
                continue
            last = min(last, completions - 1)
        if out and out[-1][1] == first - 1:
            out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


def merge(a: Intervals, b: Intervals) -> Intervals:
    """orderedIntervals.merge: both ordered; overlapping or adjacent intervals join."""
    out: list[list[int]] = []
    for first, last in sorted(a + b):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return [(lo, hi) for lo, hi in out]


def with_indexes(a: Intervals, indexes: Iterable[int]) -> Intervals:
    return merge(a, [(i, i) for i in sorted(set(indexes))])


def total(a: Intervals) -> int:
    return sum(last - first + 1 for first, last in a)


def has(a: Intervals, ix: int) -> bool:
    return any(first <= ix <= last for first, last in a)


def to_string(a: Intervals) -> str:
    """orderedIntervals.String: "0,2-4"; a pair of neighbours is written "5,6"."""
    parts = []
    for first, last in a:
        if last == first:
            parts.append(str(first))
        elif last == first + 1:
            parts.append(f"{first},{last}")
        else:
            parts.append(f"{first}-{last}")
    return ",".join(parts)


def first_pending(count: int, completions: int, non_pending: Intervals) -> list[int]:
    """firstPendingIndexes: the ``count`` lowest indexes below ``completions`` not in ``non_pending`` (active,
    succeeded, failed, and with podReplacementPolicy Failed terminating)."""
    out: list[int] = []
    candidate = 0
    for first, last in non_pending:
        while candidate < completions and len(out) < count and candidate < first:
            out.append(candidate)
            candidate += 1
        candidate = max(candidate, last + 1)
    while candidate < completions and len(out) < count:
        out.append(candidate)
        candidate += 1
    return out


def generate_name(job_name: str, index: int) -> str:
    """podGenerateNameWithIndex (1.22+, PR #101601): ``<job>-<index>-``, the job name cut so the prefix fits
    the generated-name limit."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def annotation_int(pod: Obj | None, key: str) -> int:
    """parseIndexFailureCountAnnotation / parseInt32: 0 when absent, unparsable, negative or beyond int32."""
    if pod is None:
        return 0
    value = (pod["metadata"].get("annotations") or {}).get(key)
    try:
        v = int(value) if isinstance(value, str) else 0
    except ValueError:
        return 0
    return v if 0 <= v <= MAX_INT32 else 0


def failure_count(pod: Obj | None) -> int:
    return annotation_int(pod, FAILURE_COUNT_ANNOTATION)


def absolute_failure_count(pod: Obj | None) -> int:
    """getIndexAbsoluteFailureCount: counted and ignored failures of the index before this pod."""
    return annotation_int(pod, FAILURE_COUNT_ANNOTATION) + annotation_int(pod, IGNORED_FAILURE_COUNT_ANNOTATION)


def add_index_env(template_spec: Obj, by_label: bool) -> None:
    """addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the downward API (the index label when the
    PodIndexLabel gate is on, else the annotation) in every init and app container that lacks it."""
    where = "labels" if by_label else "annotations"
    ref = {"fieldRef": {"fieldPath": f"metadata.{where}['{INDEX_ANNOTATION}']"}}
    for key in ("initContainers", "containers"):
        for c in template_spec.get(key) or ():
            env = c.setdefault("env", [])
            if not any(isinstance(e, dict) and e.get("name") == INDEX_ENV for e in env):
                env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": dict(ref["fieldRef"])}})
