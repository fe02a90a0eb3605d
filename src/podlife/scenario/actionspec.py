"""``spec.actions``: the verb, its target and options; the kinds actions name are checked once every
CustomResourceDefinition of the scenario is known."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from podlife.api import schema
from podlife.api.meta import KINDS
from podlife.scenario.clusterconfig import NODE_FIELDS, expand_node_names
from podlife.scenario.durations import format_duration
from podlife.scenario.faultspec import node_list, parse_fault
from podlife.scenario.fieldcheck import DURATION_HINT, KIND_NAME, Check, is_subdomain
from podlife.scenario.fieldpath import join_path, schema_path
from podlife.scenario.manifests import MAX_REPLICAS, json_numbers, manifest_shape, workload_size
from podlife.scenario.model import HORIZON_SECONDS, Action

if TYPE_CHECKING:
    from podlife.kubectl.drain import DrainOptions


PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")
# The one table of action verbs and the fields each takes besides `at` and the verb (docs/scenario-format.md
# §2.2 shows every verb: tests/test_action_verbs.py); parse_action reads the verb's value, actions.py runs it.
ACTION_FIELDS: dict[str, tuple[str, ...]] = {
    "delete": ("namespace", "gracePeriodSeconds", "force", "propagationPolicy"),
    "create": ("namespace",),
    "apply": ("namespace",),
    "scale": ("namespace", "replicas"),
    "patch": ("namespace", "mergePatch", "strategicMergePatch", "subresource"),
    "cordon": (),
    "uncordon": (),
    "drain": ("ignoreDaemonSets", "force", "deleteEmptyDirData", "gracePeriodSeconds", "timeout", "disableEviction"),
    "evict": ("namespace", "gracePeriodSeconds"),
    "fault": (),
    "join": (),
    "leave": (),
}
VERBS = tuple(ACTION_FIELDS)


def parse_action(ck: Check, value: Any, path: str, nodes: list[str], until: float | None) -> Action:
    raw = ck.mapping(value, path, optional=False)
    verbs = [v for v in VERBS if v in raw]
    if len(verbs) != 1:
        found = f"found {', '.join(verbs)}" if verbs else "found none"
        raise ck.error(path, f"expected exactly one verb among {', '.join(VERBS)}; {found}")
    verb = verbs[0]
    ck.known(raw, path, ("at", verb) + ACTION_FIELDS[verb])
    at = ck.duration(ck.required(raw, "at", path, f"a duration ({DURATION_HINT})"), f"{path}.at")
    if until is not None and at > until:
        ck.warn(f"{path}.at", f"{format_duration(at)} is after spec.until ({format_duration(until)}); "
                              "the action will not run")
    elif until is None and at > HORIZON_SECONDS:
        ck.warn(f"{path}.at", f"{format_duration(at)} is after {format_duration(HORIZON_SECONDS)}, where a run "
                              "without spec.until ends; the action will not run (set spec.until)")
    action = Action(at=at, verb=verb, target=None, raw=copy.deepcopy(raw), source=ck.source(path))
    if "namespace" in raw:
        action.namespace = ck.dns_label(raw["namespace"], f"{path}.namespace")
    vpath = f"{path}.{verb}"
    if verb in ("delete", "scale", "patch", "evict"):
        action.target = _target(ck, raw[verb], vpath)
    if verb == "delete":
        _delete_options(ck, raw, path, action)
    elif verb == "evict":
        if (action.target or "").partition("/")[0] not in ("pod", "pods", "po"):
            raise ck.error(vpath, f'"{raw[verb]}" is not a pod; expected pod/NAME (evictions are for pods)')
        if raw.get("gracePeriodSeconds") is not None:
            action.grace_period_seconds = ck.integer(raw["gracePeriodSeconds"], f"{path}.gracePeriodSeconds")
    elif verb in ("create", "apply"):
        json_numbers(raw[verb])
        action.manifest = manifest_shape(ck, raw[verb], vpath)
        if action.manifest.get("kind") == "Node" and verb == "create":
            ck.warn(vpath, f"Node {action.manifest['metadata'].get('name')}: podlife assumes a machine behind it, "
                           "whose kubelet starts and registers it (as a join action does)")
        _manifest_namespace(ck, action, action.manifest, raw, path)
    elif verb == "scale":
        action.replicas = ck.integer(ck.required(raw, "replicas", path, "an integer >= 0"), f"{path}.replicas", 0,
                                     bits=32)
        if action.replicas > MAX_REPLICAS:
            raise ck.error(f"{path}.replicas", f"{action.replicas:,} pods; podlife runs workloads of at most "
                                               f"{MAX_REPLICAS:,} pods")
    elif verb == "patch":
        given = [k for k in ("mergePatch", "strategicMergePatch") if k in raw]
        if not given:
            ck.required(raw, "mergePatch", path, "a JSON merge patch mapping")
        if len(given) != 1:
            raise ck.error(path, "expected exactly one of mergePatch (a JSON merge patch mapping) and "
                                 "strategicMergePatch (a strategic merge patch mapping)")
        action.strategic = given[0] == "strategicMergePatch"
        action.merge_patch = ck.mapping(raw[given[0]], f"{path}.{given[0]}", optional=False)
        json_numbers(action.merge_patch)
        workload_size(ck, action.merge_patch, f"{path}.{given[0]}")
        if raw.get("subresource") is not None:
            action.subresource = ck.one_of(raw["subresource"], f"{path}.subresource", ("status",), "subresource")
    elif verb == "join":
        # parsed with the cluster's nodes (names unique across both); the loader attaches the NodeSpecs
        action.raw_join_names = expand_node_names(ck, ck.mapping(raw[verb], vpath, NODE_FIELDS, optional=False), vpath)
    elif verb in ("cordon", "uncordon", "drain", "leave"):
        action.target = ck.dns_subdomain(ck.string(raw[verb], vpath, "a node name"), vpath)
        if verb == "drain":
            action.drain_options = _drain_options(ck, raw, path)
        if action.target not in nodes:
            ck.warn(vpath, f'"{action.target}" is not a node of this scenario ({node_list(nodes)})')
    else:
        action.fault = parse_fault(ck, raw[verb], vpath, nodes)
    return action


_SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


def check_action_kind(ck: Check, action: Action, path: str, kinds: dict[str, schema.ServedKind], minor: int) -> None:
    """The kind a delete, scale or patch names must be served (kubectl: the server doesn't have a resource type);
    scale needs a scale subresource; a merge patch is decoded strictly against the kind's schema."""
    if action.verb not in ("delete", "scale", "patch"):
        return
    vpath = f"{path}.{action.verb}"
    kind_s, _, name = (action.target or "").partition("/")
    served = kinds.get(kind_s)
    if served is None:
        raise ck.error(vpath, f'the server doesn\'t have a resource type "{kind_s}"; expected a kind Kubernetes '
                              f"1.{minor} serves (pod, deployment, …) or one a CustomResourceDefinition of the "
                              "scenario defines")
    if served.kind not in KINDS:
        action.target = f"{served.kind}/{name}"
    if action.verb == "scale" and served.kind not in _SCALABLE:
        raise ck.error(vpath, f'{served.kind} "{name}" has no scale subresource; expected a deployment, '
                              "replicaset, statefulset or replicationcontroller")
    if action.verb == "patch" and action.merge_patch is not None:
        ppath = f"{path}.{'strategicMergePatch' if action.strategic else 'mergePatch'}"
        if served.definition is not None:
            errors = schema.check_patch(action.merge_patch, served.definition, minor)
            if errors:
                first = min(errors, key=lambda e: (ck.line(schema_path(ppath, e.path)) or 0,
                                                   [str(p) for p in e.path]))
                raise ck.error(schema_path(ppath, first.path), first.message)
        _check_patched_annotation(ck, action.merge_patch, ppath)


def _check_patched_annotation(ck: Check, patch: dict[str, Any], path: str) -> None:
    """A podlife/behavior annotation a patch sets is checked as one in a manifest."""
    from podlife.runtime.behavior import ANNOTATION, BehaviorError, parse_annotation

    for meta_path in (("metadata",), ("spec", "template", "metadata")):
        node: Any = patch
        for seg in meta_path + ("annotations",):
            node = node.get(seg) if isinstance(node, dict) else None
        text = node.get(ANNOTATION) if isinstance(node, dict) else None
        if text is None:
            continue
        where = join_path(schema_path(path, meta_path + ("annotations",)), ANNOTATION)
        if not isinstance(text, str):
            raise ck.error(where, "expected a string of YAML")
        try:
            parse_annotation(text)
        except BehaviorError as e:
            raise ck.error(f"{where}.{e.path}" if e.path else where, str(e).split(": ", 1)[-1]) from None


def _target(ck: Check, value: Any, path: str) -> str:
    """kind/name, kind lower-cased (kubectl resolves kinds case-insensitively)."""
    text = ck.string(value, path, "kind/name, e.g. pod/web-0")
    kind, sep, name = text.partition("/")
    if not sep or not KIND_NAME.match(kind) or "/" in name or not is_subdomain(name):
        raise ck.error(path, f'"{text}" is not kind/name; expected e.g. pod/web-0 or deployment/web')
    return f"{kind.lower()}/{name}"


def _delete_options(ck: Check, raw: dict[str, Any], path: str, action: Action) -> None:
    if raw.get("gracePeriodSeconds") is not None:
        action.grace_period_seconds = ck.integer(raw["gracePeriodSeconds"], f"{path}.gracePeriodSeconds")
    if raw.get("force") is not None:
        action.force = ck.boolean(raw["force"], f"{path}.force")
    if raw.get("propagationPolicy") is not None:
        action.propagation_policy = ck.one_of(raw["propagationPolicy"], f"{path}.propagationPolicy",
                                              PROPAGATION_POLICIES, "propagation policy")
    if action.force:
        # kubectl delete: --force with --grace-period > 0 is refused; --force alone (or with a negative
        # grace period) sends gracePeriodSeconds 0 (staging/src/k8s.io/kubectl/pkg/cmd/delete/delete.go)
        grace = action.grace_period_seconds
        if grace is not None and grace > 0:
            raise ck.error(f"{path}.gracePeriodSeconds", f"{grace} with force: true; expected 0 or no "
                           "gracePeriodSeconds (as kubectl refuses --force with --grace-period greater than 0)")
        action.grace_period_seconds = 0


def _drain_options(ck: Check, raw: dict[str, Any], path: str) -> DrainOptions:
    """kubectl drain's flags: --ignore-daemonsets, --force, --delete-emptydir-data, --grace-period, --timeout,
    --disable-eviction (each with kubectl's default)."""
    from podlife.kubectl.drain import DrainOptions  # on first use: few scenarios drain a node

    opts = DrainOptions()
    for key, attr in (("ignoreDaemonSets", "ignore_daemonsets"), ("force", "force"),
                      ("deleteEmptyDirData", "delete_emptydir_data"), ("disableEviction", "disable_eviction")):
        if raw.get(key) is not None:
            setattr(opts, attr, ck.boolean(raw[key], f"{path}.{key}"))
    if raw.get("gracePeriodSeconds") is not None:
        opts.grace_period_seconds = ck.integer(raw["gracePeriodSeconds"], f"{path}.gracePeriodSeconds", -1)
    if raw.get("timeout") is not None:
        opts.timeout = ck.duration(raw["timeout"], f"{path}.timeout")   # 0: no timeout
    return opts


def _manifest_namespace(ck: Check, action: Action, manifest: dict[str, Any], raw: dict[str, Any], path: str) -> None:
    meta = manifest["metadata"]
    own = meta.get("namespace")
    if "namespace" in raw and own is not None and own != action.namespace:
        raise ck.error(f"{path}.namespace", f'"{action.namespace}" differs from the manifest\'s metadata.'
                       f'namespace "{own}"; expected the same namespace or only one of them')
    if own is not None:
        action.namespace = own
    if meta.get("name") is not None:
        action.target = f"{manifest['kind'].lower()}/{meta['name']}"

