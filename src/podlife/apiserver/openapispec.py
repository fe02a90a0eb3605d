"""The OpenAPI documents kube-apiserver serves, for the modelled version: /openapi/v2 (JSON, and protobuf in
gnostic's openapi_v2 encoding, which kubectl 1.27–1.28 ask for) and /openapi/v3 (an index of per-group-version
documents, each addressed by its hash).

Public API:

- ``v2_document(minor, crds=()) -> dict``: swagger 2.0 with every built-in definition of the version (from the
  kubernetes-validate schemas), each kind's ``x-kubernetes-group-version-kind``, the custom resources of the
  given CustomResourceDefinitions (and their List types), and a path for every route the live server holds
  (podlife.apiserver.routes: list/watch, create, deletecollection, get, replace, patch, delete, and the served
  subresources), each operation with upstream's id, parameters (PATCH carries ``fieldValidation``, which
  kubectl's query-param verifier looks for before sending ``fieldValidation=Strict``), response codes,
  ``x-kubernetes-action`` and ``x-kubernetes-group-version-kind``; plus the discovery operations.
- ``v2_protobuf(doc) -> bytes``: that document as a gnostic openapi_v2.Document message
  (asked for as ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` or ``…spec.v2.v1.0+protobuf``,
  answered with Content-Type ``V2_PROTOBUF``, the latter).
- ``v3_documents(minor, crds=()) -> dict``: every /openapi/v3 document by its index path: one per served
  group-version (its paths and the component schemas they reach), one per group (``apis/apps``) and
  ``api``, ``apis``, ``version`` (discovery).
- ``v3_index(minor, crds=()) -> dict``: ``{"paths": {"api/v1": {"serverRelativeURL":
  "/openapi/v3/api/v1?hash=<HASH>"}, …}}`` (kube-openapi handler3); ``v3_index_of(encoded)`` the same of
  already encoded documents.
- ``v3_document(minor, group_version, crds=()) -> dict | None``: one group-version's document, None when the
  server does not serve it.
- ``encode(doc) -> bytes`` and ``etag(data) -> str``: the bytes to serve and their hash (upper-case hex
  SHA-512, handler3 computeETag); the server sends it quoted as the ETag and redirects a stale ``?hash=``.

Definitions are named as upstream names them (io.k8s.api.apps.v1.Deployment; a custom resource's group
reversed: com.example.stable.v1.CronTab).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from podlife.api.schema import builtin_kinds, definitions
from podlife.apiserver.resources import RETURNS_DELETED, Resource, builtin_resources, custom_resources
from podlife.apiserver.routes import Operation, Route, gv_base, routes

# kube-openapi pkg/handler: asked for as either, answered with the second
V2_PROTOBUF_ACCEPTED = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"



# ------------------------------------------------------------------------------------------------ schemas

def _types(schema: dict[str, Any]) -> list[Any]:
    """A schema's type as a list (a string is one type)."""
    t = schema.get("type")
    return [t] if isinstance(t, str) else list(t or [])


def _route_sub_kind(rt: Route) -> str:
    """The kind a subresource route serves ("" for the resource itself)."""
    if not rt.sub:
        return ""
    found = rt.resource.subresource(rt.sub)
    assert found is not None   # routes.py makes a subresource route only from the resource's own subresources
    return found[0]


def _swagger_schema(s: Any, ref_prefix: str) -> Any:
    """A kubernetes-validate schema node back in OpenAPI form: no null in types, no additionalProperties: false
    (the strict variant's), Quantity and IntOrString as the API documents them, refs to the document."""
    if isinstance(s, list):
        return [_swagger_schema(x, ref_prefix) for x in s]
    if not isinstance(s, dict):
        return s
    out: dict[str, Any] = {}
    one_of = s.get("oneOf")
    if isinstance(one_of, list):
        kinds = sorted({t for x in one_of if isinstance(x, dict) for t in _types(x) if t != "null"})
        if kinds == ["integer", "string"]:
            out.update({"type": "string", "format": "int-or-string"})
        elif kinds == ["number", "string"]:
            out["type"] = "string"
    for k, v in s.items():
        if k in ("oneOf", "$schema", "$id") or (k == "additionalProperties" and v is False):
            continue
        if k == "$ref":
            out["$ref"] = ref_prefix + v.rpartition("/")[2]
        elif k == "type":
            types = [t for t in (v if isinstance(v, list) else [v]) if t != "null"]
            if types:
                out["type"] = types[0]
        elif k == "format" and v == "quantity":
            continue
        elif k in ("properties",) and isinstance(v, dict):
            out[k] = {name: _swagger_schema(x, ref_prefix) for name, x in v.items()}
        elif k == "enum" and isinstance(v, list):
            out[k] = [x for x in v if x is not None]
        else:
            out[k] = _swagger_schema(v, ref_prefix) if isinstance(v, (dict, list)) else v
    return out


@lru_cache(maxsize=4)
def _builtin_definitions(minor: int, ref_prefix: str) -> dict[str, Any]:
    defs = definitions(minor)
    return {name: _swagger_schema(d, ref_prefix) for name, d in sorted(defs.items())}


def _wrap_refs(s: Any) -> Any:
    """kube-openapi pkg/builder3/util: WrapRefs — in OpenAPI v3 a $ref with sibling keys (description,
    x-kubernetes-*) becomes ``{"allOf": [{"$ref": …}], …siblings}``, as a bare $ref's siblings are ignored
    (kubectl explain would lose the field's description). A $ref alone stays as it is."""
    if isinstance(s, list):
        return [_wrap_refs(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {k: _wrap_refs(v) for k, v in s.items() if k != "$ref"}
    if "$ref" not in s:
        return out
    if not out:
        return {"$ref": s["$ref"]}
    return {"allOf": [{"$ref": s["$ref"]}], **out}


_OBJECT_META_DESCRIPTION = ("Standard object's metadata. More info: https://git.k8s.io/community/contributors/"
                            "devel/sig-architecture/api-conventions.md#metadata")


def _add_type_meta(schema: dict[str, Any], ref_prefix: str) -> None:
    """builder.go addTypeMetaProperties, and the ObjectMeta reference with PartialObjectMetadata's description
    of it (kubectl explain <crd>.metadata shows it)."""
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of "
                           "this representation of an object."}
    props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST "
                     "resource this object represents."}
    props["metadata"] = {"$ref": ref_prefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                         "description": _OBJECT_META_DESCRIPTION}


def _reverse_group(group: str) -> str:
    return ".".join(reversed(group.split(".")))


def _custom(crds: Iterable[dict[str, Any]], ref_prefix: str, v2: bool = False) -> list[dict[str, Any]]:
    """Each served version of each CRD: its definition name, GVK, plural, scope and schema."""
    out = []
    for crd in crds:
        spec = crd.get("spec") or {}
        group, names = spec.get("group", ""), spec.get("names") or {}
        kind = names.get("kind", "")
        for v in spec.get("versions") or ():
            if not isinstance(v, dict) or not v.get("served", True):
                continue
            version = v.get("name", "")
            raw = ((v.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object",
                                                                         "x-kubernetes-preserve-unknown-fields": True}
            if v2 and raw.get("x-kubernetes-preserve-unknown-fields"):
                # controller/openapi/builder buildKubeNative: in v2 a schema preserving unknown fields at its root
                # is published as a bare object, without even apiVersion, kind and metadata (kubectl would refuse
                # any other field)
                schema: dict[str, Any] = {"type": "object"}
            else:
                schema = _v2_from_structural(raw)
                _add_type_meta(schema, ref_prefix)

            schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
            out.append({"name": f"{_reverse_group(group)}.{version}.{kind}", "group": group, "version": version,
                        "kind": kind, "plural": names.get("plural") or kind.lower() + "s",
                        "namespaced": spec.get("scope") != "Cluster", "schema": schema})
    return out


def _v2_from_structural(s: Any) -> Any:
    """apiextensions' conversion of a structural schema for publishing: nullable dropped, the rest kept."""
    if isinstance(s, list):
        return [_v2_from_structural(x) for x in s]
    if not isinstance(s, dict):
        return s
    return {k: _v2_from_structural(v) for k, v in s.items() if k != "nullable"}


# ------------------------------------------------------------------------------------------------ paths
# generated from the server's route table (podlife.apiserver.routes), operation by operation as
# kube-openapi's builder and the endpoint installer name them (staging/src/k8s.io/apiserver/pkg/endpoints/
# installer.go, openapi/openapi.go: operation ids, actions, parameters, response codes)

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "application/apply-patch+yaml")
# what the server decodes (podlife.apiserver.bodies) and answers (JSON only)
_WRITE_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_JSON = ("application/json",)
_WATCH = ("application/json", "application/json;stream=watch")

# query parameters: type and (the start of) upstream's description
_PARAMS: dict[str, tuple[str, str]] = {
    "allowWatchBookmarks": ("boolean", 'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers '
                                       "that do not implement bookmarks may ignore this flag."),
    "continue": ("string", "The continue option should be set when retrieving more results from the server."),
    "dryRun": ("string", "When present, indicates that modifications should not be persisted. Valid values are: "
                         "- All: all dry run stages will be processed"),
    "fieldManager": ("string", "fieldManager is a name associated with the actor or entity that is making these "
                               "changes."),
    "fieldSelector": ("string", "A selector to restrict the list of returned objects by their fields. Defaults "
                                "to everything."),
    "fieldValidation": ("string", "fieldValidation instructs the server on how to handle objects in the request "
                                  "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: "
                                  "- Ignore - Warn - Strict."),
    "force": ("boolean", 'Force is going to "force" Apply requests. Force flag must be unset for non-apply patch '
                         "requests."),
    "gracePeriodSeconds": ("integer", "The duration in seconds before the object should be deleted."),
    "ignoreStoreReadErrorWithClusterBreakingPotential": (
        "boolean", "if set to true, it will trigger an unsafe deletion of the resource in case the normal "
                   "deletion flow fails with a corrupt object error."),
    "labelSelector": ("string", "A selector to restrict the list of returned objects by their labels. Defaults "
                                "to everything."),
    "limit": ("integer", "limit is a maximum number of responses to return for a list call."),
    "orphanDependents": ("boolean", "Deprecated: please use the PropagationPolicy, this field will be deprecated "
                                    "in 1.7. Should the dependent objects be orphaned."),
    "pretty": ("string", "If 'true', then the output is pretty printed."),
    "propagationPolicy": ("string", "Whether and how garbage collection will be performed. Acceptable values "
                                    "are: 'Orphan', 'Background', 'Foreground'."),
    "resourceVersion": ("string", "resourceVersion sets a constraint on what resource versions a request may be "
                                  "served from."),
    "resourceVersionMatch": ("string", "resourceVersionMatch determines how resourceVersion is applied to list "
                                       "calls."),
    "sendInitialEvents": ("boolean", "`sendInitialEvents=true` may be set together with `watch=true`: the watch "
                                     "stream begins with synthetic events for the current state."),
    "timeoutSeconds": ("integer", "Timeout for the list/watch call."),
    "watch": ("boolean", "Watch for changes to the described resources and return them as a stream of add, "
                         "update, and remove notifications. Specify resourceVersion."),
    # pods/log (PodLogOptions) and the connecters (PodExecOptions, PodAttachOptions, PodPortForwardOptions)
    "command": ("string", "Command is the remote command to execute. argv array."),
    "container": ("string", "The container for which to stream logs (or to run the command in). Defaults to "
                            "only container if there is one container in the pod."),
    "follow": ("boolean", "Follow the log stream of the pod. Defaults to false."),
    "insecureSkipTLSVerifyBackend": ("boolean", "insecureSkipTLSVerifyBackend indicates that the apiserver "
                                                "should not confirm the validity of the serving certificate of "
                                                "the backend it is connecting to."),
    "limitBytes": ("integer", "If set, the number of bytes to read from the server before terminating the log "
                              "output."),
    "path": ("string", "Path is the URL path to use for the current proxy request."),
    "ports": ("integer", "List of ports to forward."),
    "previous": ("boolean", "Return previous terminated container logs. Defaults to false."),
    "sinceSeconds": ("integer", "A relative time in seconds before the current time from which to show logs."),
    "stderr": ("boolean", "Redirect the standard error stream of the pod for this call."),
    "stdin": ("boolean", "Redirect the standard input stream of the pod for this call. Defaults to false."),
    "stdout": ("boolean", "Redirect the standard output stream of the pod for this call."),
    "tailLines": ("integer", "If set, the number of lines from the end of the logs to show."),
    "timestamps": ("boolean", "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line "
                              "of log output. Defaults to false."),
    "tty": ("boolean", "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false."),
}
_LIST_QUERY = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
               "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_WRITE_QUERY = ("dryRun", "fieldManager", "fieldValidation")
_DELETE_QUERY = ("dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
                 "orphanDependents", "propagationPolicy")
_SUB_QUERY = {"log": ("container", "follow", "insecureSkipTLSVerifyBackend", "limitBytes", "previous",
                      "sinceSeconds", "tailLines", "timestamps"),
              "exec": ("command", "container", "stderr", "stdin", "stdout", "tty"),
              "attach": ("container", "stderr", "stdin", "stdout", "tty"),
              "portforward": ("ports",), "proxy": ("path",)}
# installer.go: the response codes each action documents (401 on every operation)
_CODES = {"get": ("200",), "list": ("200",), "connect": ("200",), "deletecollection": ("200",),
          "post": ("200", "201", "202"), "put": ("200", "201"), "patch": ("200", "201"), "delete": ("200", "202")}
_CODE_TEXT = {"200": "OK", "201": "Created", "202": "Accepted", "401": "Unauthorized"}
_PREFIX = {"get": "read", "list": "list", "post": "create", "put": "replace", "patch": "patch", "delete": "delete",
           "deletecollection": "deleteCollection"}


def _camel(group: str, version: str) -> str:
    """openapi/openapi.go: the group-version part of operation ids (CoreV1, RbacAuthorizationV1)."""
    parts = [p for p in group.removesuffix(".k8s.io").split(".") if p] if group else ["core"]
    return "".join(p[:1].upper() + p[1:] for p in parts) + version[:1].upper() + version[1:]


def _tag(group: str, version: str) -> str:
    c = _camel(group, version).removesuffix(version[:1].upper() + version[1:])
    return f"{c[:1].lower()}{c[1:]}_{version}"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


@dataclass(frozen=True)
class _Names:
    """The definitions the operations of a minor refer to, and the CRD schemas."""
    builtin: dict[tuple[str, str], str]      # (apiVersion, kind) -> definition name
    custom: dict[tuple[str, str], str]

    def of(self, api_version: str, kind: str) -> str:
        return self.custom.get((api_version, kind)) or self.builtin.get((api_version, kind), "")


def _sub_gvk(r: Resource, kind: str) -> dict[str, str]:
    from podlife.apiserver.discovery import _response_kind

    return dict(sorted(_response_kind(r, kind or r.kind).items()))


class _Builder:
    """Paths of routes, in swagger 2.0 or OpenAPI 3.0 form."""

    def __init__(self, minor: int, names: _Names, v3: bool) -> None:
        from podlife.versions import profile

        self.names = names
        self.v3 = v3
        self.prefix = "#/components/schemas/" if v3 else "#/definitions/"
        # version-dependent query parameters (podlife.versions: openapi_query_parameters)
        self.added = set(profile(f"1.{minor}").openapi_query_parameters)

    def ref(self, name: str) -> dict[str, str]:
        return {"$ref": self.prefix + name}

    def _param(self, name: str, where: str = "query", description: str | None = None) -> dict[str, Any] | None:
        if name in _VERSIONED_PARAMS and name not in self.added:
            return None
        type_, text = _PARAMS.get(name, ("string", ""))
        text = description if description is not None else text
        if self.v3:
            p: dict[str, Any] = {"description": text, "in": where, "name": name,
                                 "schema": {"type": type_, "uniqueItems": True}}
        else:
            p = {"description": text, "in": where, "name": name, "type": type_, "uniqueItems": True}
        if where == "path":
            p["required"] = True
        return p

    def _query(self, names: Iterable[str]) -> list[dict[str, Any]]:
        return [p for p in (self._param(n) for n in names) if p is not None]

    def _body(self, schema: dict[str, Any], types: Iterable[str]) -> Any:
        if self.v3:
            return {"content": {t: {"schema": schema} for t in types}, "required": True}
        return {"in": "body", "name": "body", "required": True, "schema": schema}

    def _responses(self, action: str, schema: dict[str, Any], produces: Iterable[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for code in (*_CODES[action], "401"):
            resp: dict[str, Any] = {"description": _CODE_TEXT[code]}
            if code != "401":
                if self.v3:
                    resp = {"content": {t: {"schema": schema} for t in produces}, **resp}
                else:
                    resp["schema"] = schema
            out[code] = resp
        return out

    def operation(self, rt: Route, op: Operation) -> dict[str, Any]:
        r, sub = rt.resource, rt.sub
        sub_kind = _route_sub_kind(rt)
        gvk = _sub_gvk(r, sub_kind) if sub else {"group": r.group, "kind": r.kind, "version": r.version}
        obj_api = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
        obj_ref = self.ref(self.names.of(obj_api, gvk["kind"]))
        gv = _camel(r.group, r.version)
        scope = "Namespaced" if rt.scope == "namespaced" else ""
        tail = "ForAllNamespaces" if rt.scope == "all" else ""
        sub_camel = sub.capitalize() if sub else ""
        a = op.action
        if a == "connect":
            op_id = f"connect{gv}{op.method.capitalize()}{scope}{r.kind}{sub_camel}"
            description = f"connect {op.method.upper()} requests to {sub} of {r.kind}"
        else:
            op_id = f"{_PREFIX[a]}{gv}{scope}{r.kind}{sub_camel}{tail}"
            description = _describe(a, r.kind, sub)
        params: list[dict[str, Any]] = []
        body: Any = None
        consumes: tuple[str, ...] = ("*/*",)
        produces: tuple[str, ...] = _JSON
        schema: dict[str, Any] = obj_ref
        if a == "list":
            schema, produces = self.ref(self.names.of(obj_api, gvk["kind"] + "List")), _WATCH
            verbs = r.verbs
            params = self._query(n for n in _LIST_QUERY if n not in ("watch", "allowWatchBookmarks",
                                                                     "sendInitialEvents") or "watch" in verbs)
        elif a in ("post", "put"):
            body, consumes = self._body(obj_ref, _WRITE_TYPES), _WRITE_TYPES
            params = self._query(_WRITE_QUERY)
        elif a == "patch":
            consumes = _PATCH_TYPES
            if r.custom:   # apiextensions-apiserver: no strategic merge patch for custom resources
                consumes = tuple(t for t in consumes if "strategic" not in t)
            if sub == "scale":   # podlife's scale subresource takes no apply patch
                consumes = tuple(t for t in consumes if "apply" not in t)
            body = self._body(self.ref(_META + "Patch"), consumes)
            params = self._query((*_WRITE_QUERY, "force"))
        elif a == "delete":
            body = self._body(self.ref(_META + "DeleteOptions"), _JSON)
            params = self._query(_DELETE_QUERY)
            if r.custom or r.kind not in _returns_deleted():
                schema = self.ref(_META + "Status")
        elif a == "deletecollection":
            body = self._body(self.ref(_META + "DeleteOptions"), _JSON)
            names = sorted({*_DELETE_QUERY, *_LIST_QUERY} - {"watch", "allowWatchBookmarks"})
            params = self._query(names)
            schema = self.ref(_META + "Status")
        elif a == "connect" or sub == "log":
            schema = {"type": "string"}
            produces = ("*/*",) if a == "connect" else ("text/plain",)
            params = self._query(_SUB_QUERY[sub or ""])
        o: dict[str, Any] = {"description": description, "operationId": op_id}
        if self.v3:
            if params:
                o["parameters"] = params
            if body is not None:
                o["requestBody"] = body
        else:
            o["consumes"] = list(consumes)
            o["produces"] = list(produces)
            o["parameters"] = ([body] if body is not None else []) + params
            o["schemes"] = ["https"]
        o["responses"] = self._responses(a, schema, produces)
        o["tags"] = [_tag(r.group, r.version)]
        o["x-kubernetes-action"] = a
        o["x-kubernetes-group-version-kind"] = gvk
        return o

    def path_item(self, rt: Route) -> dict[str, Any]:
        item: dict[str, Any] = {op.method: self.operation(rt, op) for op in rt.operations}
        params = []
        if rt.item:
            sub_kind = _route_sub_kind(rt)
            shown = _sub_gvk(rt.resource, sub_kind)["kind"] if rt.sub else rt.resource.kind
            params.append(self._param("name", "path", f"name of the {shown}"))
        if rt.scope == "namespaced":
            params.append(self._param("namespace", "path", "object name and auth scope, such as for teams and "
                                                           "projects"))
        params.append(self._param("pretty"))
        item["parameters"] = [p for p in params if p is not None]
        return dict(sorted(item.items()))

    def discovery_op(self, op_id: str, description: str, schema: str, tag: str) -> dict[str, Any]:
        o: dict[str, Any] = {"description": description, "operationId": op_id}
        if not self.v3:
            o.update(consumes=list(_WRITE_TYPES), produces=list(_WRITE_TYPES), schemes=["https"])
        o["responses"] = self._responses("get", self.ref(schema), _WRITE_TYPES[:1])
        o["tags"] = [tag]
        return {"get": o}


_VERSIONED_PARAMS = frozenset({"resourceVersionMatch", "fieldValidation", "sendInitialEvents",
                               "ignoreStoreReadErrorWithClusterBreakingPotential"})


def _describe(action: str, kind: str, sub: str | None) -> str:
    if sub:
        return {"get": f"read {sub} of the specified {kind}", "put": f"replace {sub} of the specified {kind}",
                "patch": f"partially update {sub} of the specified {kind}",
                "post": f"create {sub} of {_article(kind)} {kind}",
                "delete": f"delete {sub} of {_article(kind)} {kind}"}[action]
    return {"list": f"list or watch objects of kind {kind}", "post": f"create {_article(kind)} {kind}",
            "deletecollection": f"delete collection of {kind}", "get": f"read the specified {kind}",
            "put": f"replace the specified {kind}", "patch": f"partially update the specified {kind}",
            "delete": f"delete {_article(kind)} {kind}"}[action]


def _returns_deleted() -> frozenset[str]:
    return RETURNS_DELETED


def _names(minor: int, custom: list[dict[str, Any]]) -> _Names:
    builtin = {(g.api_version, g.kind): d for g, d in builtin_kinds(minor).items()}
    defs = definitions(minor)
    for (av, kind), d in list(builtin.items()):
        if d + "List" in defs:
            builtin.setdefault((av, kind + "List"), d + "List")
    names = {}
    for c in custom:
        av = f"{c['group']}/{c['version']}"
        names[(av, c["kind"])] = c["name"]
        names[(av, c["kind"] + "List")] = c["name"] + "List"
    return _Names(builtin, names)


def _resources(minor: int, crds: list[dict[str, Any]]) -> list[Resource]:
    return [*builtin_resources(minor), *custom_resources(crds)]


def _route_paths(builder: _Builder, resources: list[Resource]) -> dict[str, Any]:
    return {rt.path: builder.path_item(rt) for rt in routes(resources)}


def _discovery_paths(builder: _Builder, resources: list[Resource], only: str | None) -> dict[str, Any]:
    """/api/, /apis/, /apis/GROUP/, /api[s]/…/VERSION/ and /version/ (upstream's discovery operations);
    ``only`` picks one v3 document's: a group-version, "api", "apis", "apis/GROUP" or "version"."""
    out: dict[str, Any] = {}

    def want(key: str) -> bool:
        return only is None or only == key

    if want("api"):
        out["/api/"] = builder.discovery_op("getCoreAPIVersions", "get available API versions",
                                            _META + "APIVersions", "core")
    if want("apis"):
        out["/apis/"] = builder.discovery_op("getAPIVersions", "get available API versions",
                                             _META + "APIGroupList", "apis")
    if want("version"):
        out["/version/"] = builder.discovery_op("getCodeVersion", "get the version information for this server",
                                                "io.k8s.apimachinery.pkg.version.Info", "version")
    for group, version in sorted({(r.group, r.version) for r in resources}):
        camel = _camel(group, version)
        gv = f"{group}/{version}" if group else version
        if want(gv):
            out[f"{gv_base(group, version)}/"] = builder.discovery_op(
                f"get{camel}APIResources", "get available resources", _META + "APIResourceList",
                _tag(group, version))
        if group and want(f"apis/{group}"):
            g = camel.removesuffix(version[:1].upper() + version[1:])
            out[f"/apis/{group}/"] = builder.discovery_op(f"get{g}APIGroup", "get information of a group",
                                                          _META + "APIGroup", g[:1].lower() + g[1:])
    return out


# ------------------------------------------------------------------------------------------------ documents

def _info(minor: int) -> dict[str, str]:
    return {"title": "Kubernetes", "version": f"v1.{minor}.0"}


def _published(minor: int, custom: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    published = dict(_builtin_definitions(minor, prefix))
    for c in custom:
        published[c["name"]] = c["schema"]
        published[c["name"] + "List"] = _custom_list(c, prefix)
    return published


def _custom_list(c: dict[str, Any], prefix: str) -> dict[str, Any]:
    """apiextensions-apiserver controller/openapi/builder: the list type of a custom resource."""
    return {"description": f"{c['kind']}List is a list of {c['kind']}", "properties": {
        "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this "
                                                        "representation of an object."},
        "items": {"type": "array", "description": f"List of {c['plural']}. More info: "
                                                  "https://git.k8s.io/community/contributors/devel/"
                                                  "sig-architecture/api-conventions.md",
                  "items": {"$ref": prefix + c["name"]}},
        "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this "
                                                  "object represents."},
        "metadata": {"$ref": prefix + _META + "ListMeta"}},
        "required": ["items"], "type": "object",
        "x-kubernetes-group-version-kind": [{"group": c["group"], "kind": c["kind"] + "List",
                                             "version": c["version"]}]}


def v2_document(minor: int, crds: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    crds = list(crds)
    prefix = "#/definitions/"
    custom = _custom(crds, prefix, v2=True)
    resources = _resources(minor, crds)
    builder = _Builder(minor, _names(minor, custom), v3=False)
    paths = {**_discovery_paths(builder, resources, None), **_route_paths(builder, resources)}
    return {"swagger": "2.0", "info": _info(minor), "paths": dict(sorted(paths.items())),
            "definitions": dict(sorted(_published(minor, custom, prefix).items()))}


def _index_path(gv: str) -> str:
    return f"api/{gv}" if "/" not in gv else f"apis/{gv}"


def v3_documents(minor: int, crds: Iterable[dict[str, Any]] = ()) -> dict[str, dict[str, Any]]:
    """Every /openapi/v3 document, by its index path (api/v1, apis/apps/v1, apis/apps, apis, api, version):
    one per served group-version and group, and the discovery documents (kube-openapi handler3)."""
    crds = list(crds)
    prefix = "#/components/schemas/"
    custom = _custom(crds, prefix)
    resources = _resources(minor, crds)
    builder = _Builder(minor, _names(minor, custom), v3=True)
    schemas = _published(minor, custom, prefix)
    by_gv: dict[str, list[Resource]] = {}
    for r in resources:
        by_gv.setdefault(r.api_version, []).append(r)
    keys = ["api", "apis", "version", *sorted(by_gv), *sorted({f"apis/{r.group}" for r in resources if r.group})]
    docs = {}
    for key in keys:
        paths = dict(_discovery_paths(builder, resources, key))
        if key in by_gv:
            paths.update(_route_paths(builder, by_gv[key]))
        paths = dict(sorted(paths.items()))
        reached = _reachable(paths, schemas, prefix)
        docs[key if key in ("api", "apis", "version") or key.startswith("apis/") and key.count("/") == 1
             else _index_path(key)] = {"openapi": "3.0.0", "info": _info(minor), "paths": paths,
                                       "components": {"schemas": {n: _wrap_refs(schemas[n])
                                                                  for n in sorted(reached)}}}
    return dict(sorted(docs.items()))


def v3_document(minor: int, group_version: str, crds: Iterable[dict[str, Any]] = ()) -> dict[str, Any] | None:
    """One group-version's document, None when the version does not serve it."""
    return v3_documents(minor, crds).get(_index_path(group_version))


def _reachable(root: Any, schemas: dict[str, Any], prefix: str) -> set[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                name = ref[len(prefix):]
                if name not in seen and name in schemas:
                    seen.add(name)
                    todo.append(schemas[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return seen


def encode(doc: dict[str, Any]) -> bytes:
    """Compact JSON, made a path or definition at a time: the same bytes as one json.dumps, but the encoder
    gives up the GIL between pieces, so a server building a document in a thread keeps answering."""
    return _encode(doc, 3).encode()


def _encode(value: Any, depth: int) -> str:
    if depth and isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _encode(v, depth - 1)
                              for k, v in value.items()) + "}"
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def etag(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest().upper()


def v3_index_of(encoded: dict[str, tuple[bytes, str]]) -> dict[str, Any]:
    """handler3's index of encoded documents (path -> (bytes, etag))."""
    return {"paths": {path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={tag}"}
                      for path, (_, tag) in sorted(encoded.items())}}


def v3_index(minor: int, crds: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    encoded = {}
    for path, doc in v3_documents(minor, crds).items():
        data = encode(doc)
        encoded[path] = (data, etag(data))
    return v3_index_of(encoded)


# ------------------------------------------------------------------------------------------------ gnostic protobuf

def _key(num: int, wire: int) -> bytes:
    return _varint((num << 3) | wire)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _str(num: int, s: str) -> bytes:
    data = s.encode()
    return _key(num, 2) + _varint(len(data)) + data if s else b""


def _msg(num: int, data: bytes, keep_empty: bool = False) -> bytes:
    return _key(num, 2) + _varint(len(data)) + data if data or keep_empty else b""


def _bool(num: int, v: bool) -> bytes:
    return _key(num, 0) + b"\x01" if v else b""


def _int(num: int, v: Any) -> bytes:
    return _key(num, 0) + _varint(int(v)) if v else b""


def _double(num: int, v: Any) -> bytes:
    import struct
    return _key(num, 1) + struct.pack("<d", float(v)) if v is not None else b""


def _any(num: int, value: Any) -> bytes:
    """Any{yaml}: gnostic keeps arbitrary values as YAML text (JSON is YAML)."""
    return _msg(num, _str(2, json.dumps(value, ensure_ascii=False)), keep_empty=True)


def _extensions(num: int, node: dict[str, Any]) -> bytes:
    return b"".join(_msg(num, _str(1, k) + _any(2, v), keep_empty=True)
                    for k, v in node.items() if k.startswith("x-"))


def _schema(s: dict[str, Any]) -> bytes:
    """openapi_v2.Schema."""
    out = [_str(1, s.get("$ref", "")), _str(2, s.get("format", "")), _str(3, s.get("title", "")),
           _str(4, s.get("description", ""))]
    if "default" in s:
        out.append(_any(5, s["default"]))
    for num, key in ((6, "multipleOf"), (7, "maximum")):
        if key in s:
            out.append(_double(num, s[key]))
    out.append(_bool(8, s.get("exclusiveMaximum", False)))
    if "minimum" in s:
        out.append(_double(9, s["minimum"]))
    out.append(_bool(10, s.get("exclusiveMinimum", False)))
    for num, key in ((11, "maxLength"), (12, "minLength")):
        out.append(_int(num, s.get(key)))
    out.append(_str(13, s.get("pattern", "")))
    for num, key in ((14, "maxItems"), (15, "minItems")):
        out.append(_int(num, s.get(key)))
    out.append(_bool(16, s.get("uniqueItems", False)))
    for num, key in ((17, "maxProperties"), (18, "minProperties")):
        out.append(_int(num, s.get(key)))
    out.extend(_str(19, r) for r in s.get("required") or ())
    out.extend(_any(20, e) for e in s.get("enum") or ())
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_msg(21, _msg(1, _schema(extra), keep_empty=True), keep_empty=True))
    elif isinstance(extra, bool):
        out.append(_msg(21, _key(2, 0) + (b"\x01" if extra else b"\x00"), keep_empty=True))
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        out.append(_msg(22, b"".join(_str(1, t) for t in types), keep_empty=True))
    if isinstance(s.get("items"), dict):
        out.append(_msg(23, _msg(1, _schema(s["items"]), keep_empty=True), keep_empty=True))
    out.extend(_msg(24, _schema(x), keep_empty=True) for x in s.get("allOf") or ())
    if isinstance(s.get("properties"), dict):
        named = b"".join(_msg(1, _str(1, k) + _msg(2, _schema(v), keep_empty=True), keep_empty=True)
                         for k, v in s["properties"].items())
        out.append(_msg(25, named, keep_empty=True))
    out.append(_extensions(31, s))
    return b"".join(out)


def _parameter(p: dict[str, Any]) -> bytes:
    """ParametersItem{parameter: Parameter{body_parameter | non_body_parameter{query|path sub-schema}}}."""
    if p["in"] == "body":
        body = (_str(2, p["name"]) + _str(3, "body") + _bool(4, p.get("required", False))
                + _msg(5, _schema(p["schema"]), keep_empty=True))
        param = _msg(1, body, keep_empty=True)
    else:
        fields = (_bool(1, p.get("required", False)) + _str(2, p["in"]) + _str(3, p.get("description", ""))
                  + _str(4, p["name"]))
        if p["in"] == "query":   # QueryParameterSubSchema: type 6, unique_items 20
            sub = _msg(3, fields + _str(6, p.get("type", "")) + _bool(20, p.get("uniqueItems", False)),
                       keep_empty=True)
        else:                     # PathParameterSubSchema: required 1, in 2, description 3, name 4, type 5
            sub = _msg(4, fields + _str(5, p.get("type", "")) + _bool(19, p.get("uniqueItems", False)),
                       keep_empty=True)
        param = _msg(2, sub, keep_empty=True)
    return _msg(1, param, keep_empty=True)


def _operation(o: dict[str, Any]) -> bytes:
    out = [_str(3, o.get("description", "")), _str(5, o.get("operationId", ""))]
    out.extend(_str(6, x) for x in o.get("produces") or ())
    out.extend(_str(7, x) for x in o.get("consumes") or ())
    out.extend(_msg(8, _parameter(p), keep_empty=True) for p in o.get("parameters") or ())
    codes = b""
    for code, resp in (o.get("responses") or {}).items():
        response = _str(1, resp.get("description", ""))
        if "schema" in resp:
            response += _msg(2, _msg(1, _schema(resp["schema"]), keep_empty=True), keep_empty=True)
        codes += _msg(1, _str(1, code) + _msg(2, _msg(1, response, keep_empty=True), keep_empty=True),
                      keep_empty=True)
    out.append(_msg(9, codes, keep_empty=True))
    out.append(_extensions(13, o))
    return b"".join(out)


_OPERATIONS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def v2_protobuf(doc: dict[str, Any]) -> bytes:
    """gnostic openapi_v2.Document: swagger 1, info 2, paths 8, definitions 9."""
    info = doc.get("info") or {}
    paths = b""
    for name, item in (doc.get("paths") or {}).items():
        body = b"".join(_msg(num, _operation(item[verb]), keep_empty=True)
                        for verb, num in _OPERATIONS.items() if verb in item)
        body += b"".join(_msg(9, _parameter(p), keep_empty=True) for p in item.get("parameters") or ())
        paths += _msg(2, _str(1, name) + _msg(2, body, keep_empty=True), keep_empty=True)
    definitions = b"".join(_msg(1, _str(1, name) + _msg(2, _schema(s), keep_empty=True), keep_empty=True)
                           for name, s in (doc.get("definitions") or {}).items())
    return (_str(1, doc.get("swagger", "2.0")) + _msg(2, _str(1, info.get("title", "")) + _str(2, info.get(
        "version", "")), keep_empty=True) + _msg(8, paths, keep_empty=True) + _msg(9, definitions, keep_empty=True))

