"""The live API's route table: every (path, HTTP method) the server answers for a resource, derived from the
catalog (podlife.apiserver.resources). The server checks each request against it (a path it does not hold is
404, a method it does not hold 405, as go-restful answers) and the OpenAPI documents
(podlife.apiserver.openapispec) are generated from it, so the two cannot drift.

The layout is the one staging/src/k8s.io/apiserver/pkg/endpoints/installer.go registers: for a namespaced
resource the collection and item under ``namespaces/{namespace}`` plus a list/watch over all namespaces; for a
cluster-scoped one the collection and item at the group-version; each subresource under the item. The
deprecated ``/watch/`` paths are not served (a watch is a list with ``?watch=true``).
"""

from __future__ import annotations

from dataclasses import dataclass

from podlife.api.errors import ApiError
from podlife.apiserver.resources import Resource
from podlife.apiserver.status import method_not_allowed, not_found_path

# the subresources podlife serves (podlife.apiserver.subresources); the catalog also names nodes/proxy
# (discovery lists it as upstream does) but its requests are 405 here (podproxy)
SERVED_SUBRESOURCES = frozenset({"status", "scale", "binding", "eviction", "log", "exec", "attach", "portforward",
                                 "finalize", "proxy", "approval", "ephemeralcontainers", "token"})
# installer.go: the connecter subresources answer GET and POST as "connect"
CONNECT = frozenset({"exec", "attach", "portforward"})
PROXIED = frozenset({"pods", "services"})   # the proxy subresources podlife serves (podproxy); not nodes/proxy


def served(resource: str, sub: str) -> bool:
    return sub in SERVED_SUBRESOURCES and (sub != "proxy" or resource in PROXIED)
# an item's and a subresource's HTTP method -> the verb the catalog names
_ITEM_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "POST": "create"}


@dataclass(frozen=True)
class Operation:
    method: str     # lower-case HTTP method, as OpenAPI keys it
    verb: str       # the catalog's (discovery's) verb
    action: str     # x-kubernetes-action (installer.go: get, list, post, put, patch, delete, deletecollection, connect)


@dataclass(frozen=True)
class Route:
    resource: Resource
    path: str                   # with {namespace} and {name} placeholders
    scope: str                  # "namespaced", "cluster" or "all" (a namespaced resource across namespaces)
    item: bool                  # names one object
    sub: str | None
    operations: tuple[Operation, ...]


def _collection_ops(r: Resource, all_namespaces: bool) -> tuple[Operation, ...]:
    ops = []
    if "list" in r.verbs:
        ops.append(Operation("get", "list", "list"))
    if all_namespaces:
        return tuple(ops)   # installer.go registers only list and watch across namespaces
    if "create" in r.verbs:
        ops.append(Operation("post", "create", "post"))
    if "deletecollection" in r.verbs:
        ops.append(Operation("delete", "deletecollection", "deletecollection"))
    return tuple(ops)


def _item_ops(r: Resource) -> tuple[Operation, ...]:
    table = (("get", "get", "get"), ("put", "update", "put"), ("patch", "patch", "patch"),
             ("delete", "delete", "delete"))
    return tuple(Operation(m, v, a) for m, v, a in table if v in r.verbs)


def _sub_ops(name: str, verbs: tuple[str, ...]) -> tuple[Operation, ...]:
    if name in CONNECT:
        return tuple(Operation(m, v, "connect") for m, v in (("get", "get"), ("post", "create")) if v in verbs)
    if name == "proxy":
        # a connecter for every method of proxyMethods (pkg/registry/core/pod/rest/subresources.go,
        # service/proxy.go; installer.go registers a connect action for each); HEAD authorizes as get, OPTIONS
        # has no verb of its own (request/requestinfo.go) and is served wherever the proxy is
        methods = (("get", "get"), ("post", "create"), ("put", "update"), ("patch", "patch"), ("delete", "delete"),
                   ("head", "get"), ("options", "get"))
        return tuple(Operation(m, v, "connect") for m, v in methods if v in verbs)
    table = (("get", "get", "get"), ("post", "create", "post"), ("put", "update", "put"),
             ("patch", "patch", "patch"), ("delete", "delete", "delete"))
    return tuple(Operation(m, v, a) for m, v, a in table if v in verbs)


def gv_base(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def resource_routes(r: Resource) -> list[Route]:
    b = gv_base(r.group, r.version)
    out: list[Route] = []
    if r.namespaced:
        collection, scope = f"{b}/namespaces/{{namespace}}/{r.resource}", "namespaced"
        if "list" in r.verbs:
            out.append(Route(r, f"{b}/{r.resource}", "all", False, None, _collection_ops(r, True)))
    else:
        collection, scope = f"{b}/{r.resource}", "cluster"
    ops = _collection_ops(r, False)
    if ops:
        out.append(Route(r, collection, scope, False, None, ops))
    ops = _item_ops(r)
    if ops:
        out.append(Route(r, f"{collection}/{{name}}", scope, True, None, ops))
    for name, _kind, verbs in r.subresources:
        if served(r.resource, name):
            sub_ops = _sub_ops(name, verbs)
            if sub_ops:
                out.append(Route(r, f"{collection}/{{name}}/{name}", scope, True, name, sub_ops))
    return out


def routes(resources: list[Resource]) -> list[Route]:
    """Every route of the given resources, by path."""
    return sorted((rt for r in resources for rt in resource_routes(r)), key=lambda rt: rt.path)


def _unregistered_method() -> ApiError:
    """go-restful's 405 for a path registered without the method, as the API server's service error handler
    writes it (apimachinery api/errors NewGenericServerResponse)."""
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def check(r: Resource, namespace: str | None, name: str | None, sub: str | None, method: str,
          watch: bool) -> None:
    """Refuse a request the route table does not hold: 404 for a path it has no route for, 405 for a method the
    route does not answer (go-restful), 405 for a watch of a resource that cannot be watched
    (handlers/get.go ListResource: NewMethodNotSupported)."""
    if r.namespaced and namespace is None and (name is not None or sub is not None):
        raise not_found_path()   # no item path outside a namespace
    if sub is not None:
        if not served(r.resource, sub):   # registered upstream, not served by podlife (README)
            raise method_not_allowed(method, f"{r.resource}/{sub}")
        found = r.subresource(sub)
        if method.lower() not in {op.method for op in _sub_ops(sub, found[1] if found is not None else ())}:
            raise _unregistered_method()
        return
    if name is not None:
        if not _item_ops(r):
            raise not_found_path()
        if _ITEM_VERBS.get(method) not in r.verbs or method == "POST":
            raise _unregistered_method()
        return
    all_namespaces = r.namespaced and namespace is None
    allowed = {op.method.upper(): op.verb for op in _collection_ops(r, all_namespaces)}
    if method not in allowed:
        if not allowed:
            raise not_found_path()
        raise _unregistered_method()
    if watch and "watch" not in r.verbs:
        raise method_not_allowed("watch", f"{r.resource}.{r.group}" if r.group else r.resource)
