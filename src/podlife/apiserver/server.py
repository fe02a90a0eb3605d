"""The live API server: the Kubernetes REST API over podlife's store, served with aiohttp.

Requests are store operations at the kernel's current instant (podlife.engine.live): the clock is synced
before each request, and what a write sets off at that instant runs before the answer is sent. The layout of
the request path follows staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
import traceback
from dataclasses import dataclass
from datetime import timedelta
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from podlife.api import structural
from podlife.api.duplicates import Body
from podlife.api.errors import ApiError, FieldError, conflict, invalid
from podlife.api.meta import KINDS, Obj, clone
from podlife.api.selectors import parse as parse_labels
from podlife.api.store import DeleteOptions, Store
from podlife.api import satokens
from podlife.apiserver import authn
from podlife.apiserver import (bodies, browser, crds, discovery, fieldvalidation, flowcontrolboot, patching, reviews,
                               tables, webhooks)
from podlife.apiserver.crconversion import Converter
from podlife.apiserver.cache import ReadCache
from podlife.apiserver.fields import FieldSelector
from podlife.apiserver.pages import Pages, page_key
from podlife.apiserver.livetrace import ContainerLogs, LiveTrace
from podlife.apiserver.resources import CREATE_ONLY, RETURNS_DELETED, Catalog, Resource, kind_info
from podlife.apiserver.routes import check as check_route
from podlife.apiserver.status import (
    bad_request,
    method_not_allowed,
    not_found_path,
    status_body,
    success,
    too_large,
    warning_header,
)
from podlife.apiserver.watch import Frames, WatchStream
from podlife.engine import slices

log = logging.getLogger("podlife.apiserver")

# the reasons whose constructors fill StatusDetails' name, group and kind (staging/src/k8s.io/apimachinery/pkg/
# api/errors/errors.go NewNotFound, NewAlreadyExists, NewConflict, NewForbidden, NewInvalid; NewMethodNotSupported
# without a name); NewBadRequest, NewGone, NewUnauthorized and the negotiation errors carry none
_DETAILED = frozenset({"NotFound", "AlreadyExists", "Conflict", "Forbidden", "Invalid", "MethodNotAllowed"})
NAMESPACE_SUBRESOURCES = ("status", "finalize")   # requestinfo.go namespaceSubresources
# the name runtime.NewScheme gives the built-in types' scheme (pkg/api/legacyscheme/scheme.go), which
# errors about unregistered kinds name
LEGACY_SCHEME = "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"
# requests that change nothing: they do not queue for the kernel (podlife.engine.live)
READS = frozenset({"GET", "HEAD", "OPTIONS"})
_BODY = "podlife.body"
# clients repeat their selectors (informers, kubectl -l); a parsed Selector is immutable
_parse_labels = functools.lru_cache(maxsize=1024)(parse_labels)


@dataclass
class Selection:
    """A request's label and field selectors."""
    labels: Any
    fields: FieldSelector | None

    def __bool__(self) -> bool:
        return self.labels is not None or bool(self.fields)

    def __call__(self, o: Obj) -> bool:
        if self.labels is not None and not self.labels.matches(o["metadata"].get("labels") or {}):
            return False
        return self.fields is None or self.fields.matches(o)


@dataclass
class Target:
    resource: Resource
    namespace: str | None
    name: str | None
    sub: str | None


class ApiServer:
    def __init__(self, cluster: Any, clock: Any, *, token: str | None = None, max_body: int = bodies.MAX_BODY,
                 host: str = "127.0.0.1:6443", trace_file: str | None = None,
                 served: browser.Served | None = None) -> None:
        self.cluster = cluster
        # the trace is kept bounded: the newest records for followers, all of them in trace_file
        self.trace = LiveTrace(cluster.trace, trace_file)
        self.logs = ContainerLogs(cluster.trace)
        self.stopping = asyncio.Event()   # set by a signal or POST /podlife/stop
        # snapshots (podlife.apiserver.snapshots): set by podlife up's serve, and by the first snapshot
        self.listening: Any = None
        self.connections: Callable[[], list[Any]] = list
        self.snapshot_dir: str | None = None
        self.handed_over = False   # a restore gave the serving to a snapshot's process
        self.store: Store = cluster.store
        self.cache = ReadCache(self.store)
        self.pages = Pages()   # the selections of chunked LISTs in progress
        self.frames = Frames()   # watch events' lines, shared by the watches of one encoding
        self._defaulting: dict[tuple[Any, Any, str], dict[str, Any] | None] = {}
        self.conversions = Converter()   # custom resources read at another version (podlife.apiserver.crconversion)
        self.clock = clock
        self.token = token
        self.max_body = max_body
        self.host = host
        # the names and scheme requests must come with (podlife.apiserver.browser)
        self.served = served or browser.Served.of("http", host.rsplit(":", 1)[0].strip("[]"))
        self.minor = cluster.profile.minor
        self.catalog = Catalog(self.minor)
        for r in self.catalog.builtin:
            if r.kind not in self.store.kinds and r.kind not in KINDS:
                self.store.kinds[r.kind] = kind_info(r)
        flowcontrolboot.ensure(self.store, self.minor)
        self.crds = crds.EstablishingController(self.store, self.catalog, cluster.trace)
        self.crds.start()
        from podlife.apiserver.aggregator.layer import Aggregator

        self.aggregator = Aggregator(self)

    # ---- the application ----------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.max_body + 1, middlewares=[browser.guard(lambda: self.served)])
        app.router.add_route("*", "/{tail:.*}", self.dispatch)
        return app

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        try:
            # a token's times are checked at the request's instant, which the kernel reaches only once the clock
            # has caught up (after authentication for a read, under the lock for a write)
            request[authn.USER_KEY] = authn.authenticate(request.headers.get("Authorization", ""), self.store,
                                                         self.token, self.clock.target())
            extension = self.aggregator.target(request.path)
            if extension is not None:
                # an extension API server's request: passed on as it comes, not queued for the kernel
                return await self.aggregator.serve(request, extension, reviews.user_info(request[authn.USER_KEY]))
            if request.method == "POST" and request.path == "/podlife/stop":
                # as a signal: not queued behind a write whose reaction is under way (it is cut short)
                return await self._route(request)
            if request.method in READS:
                # served at once, between two slices of a write's or the clock's run if one is under way: on
                # the store as that run has left it, all of it committed (podlife.engine.live)
                self.clock.catch_up()
                return await self._route(request)
            await self._prefetch(request)   # a slow client's body never holds the kernel
            async with self.clock.lock:
                # the whole write in slices (podlife.engine.slices): decoding, managedFields, the store write
                # and what it sets off at this instant let other clients in whenever a slice is spent
                resp = await slices.run_coroutine(self._write(request), on_pause=self.clock.slice_done)
            self.clock.wake()
            return resp
        except ApiError as e:
            return self._error(e)
        except Exception as e:  # noqa: BLE001 - the server answers 500 and stays up
            log.error("internal error serving %s %s: %s", request.method, request.path, traceback.format_exc())
            return self._error(ApiError(500, "InternalError", f"Internal error occurred: {type(e).__name__}: {e}"))

    async def _write(self, request: web.Request) -> web.StreamResponse:
        self.clock.sync()
        resp = await self._route(request)
        self.clock.settle()   # and commit what the request wrote (LiveClock.after) before answering
        return resp

    def _json(self, body: Any, status: int = 200, content_type: str = "application/json") -> web.Response:
        # the API server's JSON serializer is a json.Encoder: each body ends with a newline
        return web.Response(body=orjson.dumps(body) + b"\n", status=status, headers={"Content-Type": content_type})

    def _error(self, err: ApiError, target: Target | None = None, name: str | None = None) -> web.Response:
        kwargs: dict[str, Any] = {}
        if target is not None and not err.causes_only and err.reason in _DETAILED:
            # a create names its object in the body, not the path (NewAlreadyExists(resource, name))
            kwargs = {"name": name or target.name or err.name if err.reason != "MethodNotAllowed" else None,
                      "group": target.resource.group or None,
                      "kind": target.resource.resource if err.code != 422 else target.resource.kind}
        return self._json(status_body(err, **kwargs), status=err.code)

    async def _prefetch(self, request: web.Request) -> None:
        """Read a write's body before it queues for the kernel; ``_body`` then returns it (or raises what
        reading it raised, where the handler would have)."""
        try:
            request[_BODY] = await self._read_body(request)
        except ApiError as e:
            request[_BODY] = e

    async def _body(self, request: web.Request) -> bytes:
        got = request.get(_BODY)
        if isinstance(got, ApiError):
            raise got
        if got is not None:
            return got
        return await self._read_body(request)

    async def _read_body(self, request: web.Request) -> bytes:
        if request.content_length is not None and request.content_length > self.max_body:
            raise too_large(self.max_body)
        data = bytearray()
        async for chunk in request.content.iter_chunked(65536):
            data += chunk
            if len(data) > self.max_body:
                raise too_large(self.max_body)
        return bytes(data)

    # ---- routing -------------------------------------------------------------------------------------

    async def _route(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            oidc = [satokens.DISCOVERY_PATH, satokens.JWKS_PATH] \
                if self.cluster.profile.service_account_issuer_discovery else []
            return self._json({"paths": ["/api", "/api/v1", "/apis", "/openapi/v2", "/openapi/v3", "/version",
                                         "/healthz", "/livez", "/readyz", *oidc]})
        head = parts[0]
        if head in ("healthz", "livez", "readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if head == "version":
            return self._json(self.version())
        if request.path in (satokens.DISCOVERY_PATH, satokens.JWKS_PATH) and \
                self.cluster.profile.service_account_issuer_discovery:
            return self._issuer_discovery(request)
        if head == "openapi":
            from podlife.apiserver import openapi

            return await openapi.serve(self, request, parts[1:])
        if head == "podlife":
            from podlife.apiserver import control

            authn.require_admin(request[authn.USER_KEY], request.method, request.path)
            return await control.serve(self, request, parts[1:])
        if head == "api":
            if len(parts) == 1:
                return self._discovery(request, legacy=True)
            group, version, rest = "", parts[1], parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                return self._discovery(request, legacy=False)
            if len(parts) == 2:
                doc = discovery.api_group(self.catalog, parts[1]) or self.aggregator.group_doc(parts[1])
                if doc is None:
                    raise not_found_path()
                return self._json(doc)
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise not_found_path()
        if not rest:
            doc = discovery.resource_list(self.catalog, group, version)
            if doc is None:
                raise not_found_path()
            return self._json(doc)
        target = self._target(group, version, rest)
        # a path or method the route table does not hold: the mux's 404 or 405, without the object's details
        check_route(target.resource, target.namespace, target.name, target.sub, request.method,
                    request.query.get("watch") in ("true", "1"))
        try:
            return await self._resource(request, target)
        except ApiError as e:
            return self._error(e, target)

    def _issuer_discovery(self, request: web.Request) -> web.Response:
        """pkg/routes/openidmetadata.go: the issuer's OIDC discovery document and its keys, GET only, cacheable
        for an hour."""
        if request.method != "GET":
            raise method_not_allowed(request.method, request.path)
        issuer = satokens.issuer_of(self.store)
        if request.path == satokens.JWKS_PATH:
            resp = self._json(issuer.jwks(), content_type="application/jwk-set+json")
        else:
            resp = self._json(issuer.openid_configuration(satokens.ISSUER + satokens.JWKS_PATH))
        resp.headers["Cache-Control"] = "public, max-age=3600"
        return resp

    def _discovery(self, request: web.Request, legacy: bool) -> web.Response:
        wanted = discovery.negotiate_aggregated(request.headers.get("Accept", ""))
        if wanted is not None:
            resp = self._json(discovery.aggregated(self.catalog, wanted, legacy, self.aggregator.aggregated_groups()),
                              content_type=discovery.AGGREGATED[wanted])
        elif legacy:
            resp = self._json(discovery.api_versions(self.host))
        else:
            resp = self._json(discovery.api_group_list(self.catalog, self.aggregator.legacy_groups()))
        resp.headers["Vary"] = "Accept"
        return resp

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
        namespace = None
        if rest[0] == "namespaces" and len(rest) > 1:
            namespace = rest[1]
            if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
                rest = rest[2:]
        resource = self.catalog.lookup(group, version, rest[0])
        if resource is not None and len(rest) > 3 and rest[2] == "proxy" and resource.subresource("proxy"):
            rest = rest[:3]   # pods/NAME/proxy/PATH: the path is the proxy's (podlife.apiserver.podproxy)
        if resource is None or len(rest) > 3:
            raise not_found_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if resource.resource == "namespaces" and len(rest) <= 3 and rest[0] == "namespaces":
            name, namespace = (rest[1] if len(rest) > 1 else None), None
        if not resource.namespaced:
            namespace = None
        if sub is not None and resource.subresource(sub) is None:
            raise not_found_path()
        return Target(resource, namespace, name, sub)

    def version(self) -> dict[str, str]:
        # staging/src/k8s.io/apimachinery/pkg/version.Info
        return {"major": "1", "minor": str(self.minor), "gitVersion": f"v1.{self.minor}.0",
                "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24.0", "compiler": "gc",
                "platform": "linux/amd64"}

    # ---- resources -----------------------------------------------------------------------------------

    async def _resource(self, request: web.Request, t: Target) -> web.StreamResponse:
        m = request.method
        q = request.query
        if t.sub is not None:
            from podlife.apiserver import subresources

            return await subresources.serve(self, request, t)
        if t.name is None:
            if m == "GET":
                if q.get("watch") in ("true", "1"):
                    return await self._watch(request, t)
                if t.resource.crd is not None:
                    await self.convertible(t.resource, self.store.list(t.resource.storage_kind, t.namespace))
                return self._list(request, t)
            if m == "POST":
                return await self._create(request, t)
            if m == "DELETE":
                return await self._delete_collection(request, t)
            raise method_not_allowed(m, t.resource.kind)
        if m == "GET":
            if t.resource.crd is not None:
                found = self.store.try_get(t.resource.storage_kind, t.namespace, t.name)
                await self.convertible(t.resource, [found] if found is not None else [])
            return self._get(request, t)
        if m == "PUT":
            return await self._update(request, t)
        if m == "PATCH":
            return await self._patch(request, t)
        if m == "DELETE":
            return await self._delete(request, t)
        raise method_not_allowed(m, t.resource.kind)

    # -- conversion out

    def now(self):
        return self.cluster.trace.start_time + timedelta(seconds=self.cluster.kernel.now)

    async def convertible(self, r: Resource, objs: list[Obj]) -> None:
        """Custom resources about to be shown at ``r``'s version: the conversion webhook called for those kept at
        another version (then ``out`` finds its answers)."""
        if r.crd is not None:
            live = any(kl.runtime.writes_logs for kl in self.cluster.kubelets.values())
            await self.conversions.prepare(self.store, r.crd, objs, r.api_version, live)

    def out(self, r: Resource, obj: Obj) -> Obj:
        """The stored object as the served version shows it."""
        conv = r.conversion
        if conv is not None:
            return conv[0](obj)
        if r.crd is not None:
            obj = self.conversions.convert(r.crd, obj, r.api_version)
        s = self._defaulting_schema(r)
        if s is not None:
            # a custom resource is defaulted when read from storage too (apiextensions-apiserver
            # pkg/apiserver/customresource_handler.go: the storage decoder applies structural defaulting), so a
            # default added to the CRD shows on objects stored before it
            obj = clone(obj)
            structural.default(obj, s)
        return obj

    def _defaulting_schema(self, r: Resource) -> dict[str, Any] | None:
        """The served version's schema of a custom resource when it has defaults, else None (memoised per CRD
        resourceVersion)."""
        if r.crd is None:
            return None
        md = r.crd.get("metadata") or {}
        key = (md.get("name"), md.get("resourceVersion"), r.version)
        if key not in self._defaulting:
            s = structural.version_schema(r.crd, r.version)
            if len(self._defaulting) > 256:
                self._defaulting.clear()
            self._defaulting[key] = s if s is not None and structural.has_defaults(s) else None
        return self._defaulting[key]

    def encoded(self, r: Resource, obj: Obj) -> bytes:
        """The stored object's JSON as the served version shows it (made once per resourceVersion)."""
        if (r.conversion is not None or self._defaulting_schema(r) is not None
                or (r.crd is not None and obj.get("apiVersion") != r.api_version)):
            return orjson.dumps(self.out(r, obj))
        return self.cache.encoded(r.storage_kind, obj)

    def _bytes(self, body: bytes, status: int = 200) -> web.Response:
        return web.Response(body=body, status=status, headers={"Content-Type": "application/json"})

    def _wants_table(self, request: web.Request) -> str | None:
        for part in request.headers.get("Accept", "").split(","):
            params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
            if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
                return params.get("v", "v1")
            if part.split(";")[0].strip() in ("application/json", "*/*") and not params:
                return None
        return None

    def _table(self, request: web.Request, t: Target, objs: list[Obj], version: str,
               list_meta: dict[str, Any] | None = None) -> web.Response:
        include = request.query.get("includeObject", "Metadata")
        r = t.resource
        now = self.now()
        options = (r.group, r.version, version, include, now, self.catalog.generation if r.crd else 0)
        cols, make = tables.row_maker(r.kind, now, version=version, include=include, crd=r.crd,
                                      served_version=r.version, profile=self.cluster.profile)

        if r.conversion is not None or r.crd is not None:
            rows = self.cache.table_rows(r.storage_kind, objs, options, lambda o: orjson.dumps(make(self.out(r, o))))
        else:   # (out() is the stored object itself)
            rows = self.cache.table_rows(r.storage_kind, objs, options, lambda o: orjson.dumps(make(o)))
        return self._bytes(tables.encoded_table(cols, rows, version=version, list_meta=list_meta) + b"\n")

    # -- reads

    def _get(self, request: web.Request, t: Target) -> web.Response:
        obj = self.store.get(t.resource.storage_kind, t.namespace, t.name or "")
        tv = self._wants_table(request)
        if tv:
            return self._table(request, t, [obj], tv, {"resourceVersion": obj["metadata"].get("resourceVersion", "")})
        return self._bytes(self.encoded(t.resource, obj))

    def _selectors(self, request: web.Request, t: Target) -> Selection:
        q = request.query
        try:
            labels = _parse_labels(q["labelSelector"]) if q.get("labelSelector") else None
        except ValueError as e:
            raise bad_request(f"unable to parse requirement: {e}") from None
        text = q.get("fieldSelector", "")
        fields = FieldSelector(t.resource.kind, text, t.resource.group) if text else None
        return Selection(labels, fields)

    def _list(self, request: web.Request, t: Target) -> web.Response:
        q = request.query
        _list_options(q)
        # the same LIST at the same state (no write anywhere since, the same instant for a Table's ages, no
        # watch event waiting for the indexes) is answered with the bytes it had: clients that poll a quiet
        # cluster (50 of them listing one namespace) cost one list per write, not one per request (not a custom
        # resource's: a conversion webhook answers it)
        kind = t.resource.storage_kind
        tv = self._wants_table(request)
        key = None
        if not self.store.delivering() and not self.store.computed(kind) and t.resource.crd is None:
            key = (request.path, request.query_string, tv, self.store.resource_version, self.store.writes[kind],
                   self.now() if tv else None, self.catalog.generation)
            body = self.cache.body(key)
            if body is not None:
                return self._bytes(body)
        resp = self._list_body(request, t, tv)
        if key is not None and isinstance(resp.body, bytes):
            self.cache.keep_body(key, resp.body)
        return resp

    def _list_body(self, request: web.Request, t: Target, tv: str | None) -> web.Response:
        q = request.query
        matches = self._selectors(request, t)
        kind = t.resource.storage_kind
        start = q.get("continue")
        at = None
        if start:
            key, at = _decode_continue(start)
        elif q.get("resourceVersionMatch") == "Exact" and q.get("resourceVersion", "").isdigit():
            at = int(q["resourceVersion"])
        if at is not None:
            # staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go GetList reads at the continue token's or
            # the exact revision; a compacted one is 410 (etcd3/errors.go interpretListError)
            if not self.store.kept(at):
                raise ApiError(410, "Expired", "The provided continue parameter is too old to display a "
                                               "consistent list result. You can start a new list without the "
                                               "continue parameter." if start else
                               "The resourceVersion for the provided list is too old.")
            at_rv = at

            def read() -> list[Obj]:
                if self.store.current_at(kind, at_rv):
                    # nothing of the kind written since: the stored objects, in the key order kept (no copy and
                    # sort of them all)
                    objs = self.store.list(kind, t.namespace)
                    return [o for o in objs if matches(o)] if matches else objs
                items = self.store.snapshot(kind, at_rv) or {}
                objs = [items[k] for k in sorted(items) if t.namespace is None or k[0] == t.namespace]
                return [o for o in objs if matches(o)]
            selected = self.pages.selected(
                (kind, at, t.namespace, q.get("labelSelector", ""), q.get("fieldSelector", "")), read)
            objs = selected.after(key, max(_parse_int(q["limit"]), 0) if q.get("limit") else 0) if start else \
                selected.objs
            start = None   # the objects after the token's key are taken
        else:
            cached = self.cache.select(kind, t.namespace, matches.labels,
                                       matches.fields.equal if matches.fields else {})
            if cached is None:
                objs = self.store.list(kind, t.namespace)
                exact = False
            else:
                objs = cached
                exact = not matches.fields and self.cache.exact(matches.labels)
            if matches and not exact:
                objs = [o for o in objs if matches(o)]
        rv = at if at is not None else self.store.resource_version
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if start:
            objs = [o for o in objs if page_key(o) > key]
        limit = q.get("limit")
        if limit and _parse_int(limit) > 0 and len(objs) > int(limit):
            objs = objs[:int(limit)]
            meta["continue"] = _encode_continue(page_key(objs[-1]), rv)
            meta["remainingItemCount"] = None
        meta = {k: v for k, v in meta.items() if v is not None}
        if tv:
            return self._table(request, t, objs, tv, meta)
        r = t.resource
        head = orjson.dumps({"kind": f"{r.kind}List", "apiVersion": r.api_version, "metadata": meta})
        return self._bytes(b"".join((head[:-1], b',"items":[', b",".join(self.encoded(r, o) for o in objs), b"]}")))

    async def _watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        q = request.query
        rv = q.get("resourceVersion")
        since = None
        if rv not in (None, "", "0"):
            if not rv.isdigit():
                raise bad_request(f'strconv.ParseUint: parsing "{rv}": invalid syntax')
            since = int(rv)
        initial = q.get("sendInitialEvents") == "true"
        if initial:
            if q.get("allowWatchBookmarks") not in ("true", "1"):
                raise ApiError(422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: allowWatchBookmarks: '
                                               "Required value: allowWatchBookmarks must be set to true when "
                                               "sendInitialEvents is set")
            since = None
        timeout = float(_parse_int(q["timeoutSeconds"])) if q.get("timeoutSeconds") else None
        if timeout is not None and timeout <= 0:
            timeout = None
        matches = self._selectors(request, t)
        tv = self._wants_table(request)
        r = t.resource
        include = q.get("includeObject", "Metadata")

        def encode(type_: str, obj: Obj, first: bool) -> Any:
            if tv:
                return tables.table(r.kind, [self.out(r, obj)], self.now(), version=tv, include=include,
                                    profile=self.cluster.profile,
                                    crd=r.crd, served_version=r.version, headers=first)
            return self.encoded(r, obj)

        def bookmark(rv_: str) -> Any:
            return {"kind": r.kind, "apiVersion": r.api_version, "metadata": {"resourceVersion": rv_}}

        async def prepare(obj: Obj) -> None:
            await self.convertible(r, [obj])

        # a plain JSON event is the same bytes for every watch of this served version (not a custom resource's:
        # those are converted, and prepared, per watch)
        shared = None if tv or r.crd is not None else (r.group, r.version, r.kind)
        stream = WatchStream(self, r.storage_kind, t.namespace, matches, encode, bookmark, since,
                             q.get("allowWatchBookmarks") in ("true", "1"), timeout, initial,
                             prepare if r.crd is not None else None, shared, self.frames)
        return await stream.serve(request)

    # -- writes

    def _user(self, request: web.Request) -> str:
        ua = request.headers.get("User-Agent", "")
        return ua.split("/")[0].split(" ")[0] or "client"

    def _dry_run(self, request: web.Request, body: dict[str, Any] | None = None) -> bool:
        values = request.query.getall("dryRun", []) + list((body or {}).get("dryRun") or [])
        for v in values:
            if v != "All":
                raise bad_request(f'Invalid dry run parameter: dryRun: Unsupported value: "{v}": supported '
                                  'values: "All"')
        return bool(values)

    def _check_body(self, t: Target, obj: Obj, *, name: str | None = None) -> Obj:
        r = t.resource
        av = obj.setdefault("apiVersion", r.api_version)
        kind = obj.setdefault("kind", r.kind)
        self._check_type(r, str(av), str(kind), obj)
        if not r.custom:
            ts = fieldvalidation.type_schema(self, r)
            if ts is not None:
                fieldvalidation.check_types(obj, ts)
        fieldvalidation.workload_size(r, obj)
        conv = r.conversion
        if conv is not None:
            obj = conv[1](obj)
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        if not isinstance(md, dict):
            raise bad_request(f'{r.kind} in version "{r.version}" cannot be handled as a {r.kind}: json: cannot '
                              "unmarshal into Go struct field of type v1.ObjectMeta")
        if r.namespaced:
            ns = md.get("namespace")
            if ns and t.namespace and ns != t.namespace:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the "
                                  "request")
            if t.namespace:
                md["namespace"] = t.namespace
        if name is not None and md.get("name") not in (None, name):
            raise bad_request(f"the name of the object ({md.get('name')}) does not match the name on the URL ({name})")
        if name is not None:
            md.setdefault("name", name)
        for f in ("managedFields",) if not isinstance(md.get("managedFields"), list) else ():
            md.pop(f, None)
        return obj

    def _check_type(self, r: Resource, av: str, kind: str, obj: Obj) -> None:
        """The body's apiVersion and kind against the endpoint's, in the order upstream finds them wrong."""
        if r.crd is not None:
            # a custom resource decodes as unstructured whatever its kind; the request's scope then refuses
            # another group version (handlers/create.go), the CR strategy another kind
            # (apiextensions-apiserver registry/customresource/validator.go: ValidateTypeMeta, named by the
            # object's own kind in rest.BeforeCreate)
            if av != r.api_version:
                raise bad_request(f"the API version in the data ({av}) does not match the expected API version "
                                  f"({r.api_version})")
            if kind != r.kind:
                name = str((obj.get("metadata") or {}).get("name") or "")
                raise invalid(f"{kind}.{r.group}", name,
                              [FieldError("kind", "Invalid value", f"must be {r.kind}", kind)])
            return
        version = av.rpartition("/")[2]
        known = self.catalog.for_kind(av, kind)
        if r.group != "apiextensions.k8s.io" and (known is None or known.crd is not None):
            # the JSON serializer creates the body's type from the scheme first (runtime.UseOrCreateObject):
            # a type it does not know is notRegisteredErr (runtime/error.go), wrapped by
            # handlers/rest.go transformDecodeError
            raise bad_request(f'{kind} in version "{version}" cannot be handled as a {r.kind}: no kind "{kind}" '
                              f'is registered for version "{av}" in scheme "{LEGACY_SCHEME}"')
        if kind != r.kind:
            # a registered type of another kind fails its conversion to the endpoint's internal type
            # (conversion/converter.go Convert)
            raise bad_request(f'{kind} in version "{version}" cannot be handled as a {r.kind}: converting '
                              f"({version}.{kind}) to ({_internal_package(r.group)}.{r.kind}): unknown conversion")
        if av != r.api_version:
            raise bad_request(f"the API version in the data ({av}) does not match the expected API version "
                              f"({r.api_version})")

    def _respond(self, obj: Obj, r: Resource, status: int, warnings: list[str]) -> web.Response:
        resp = self._json(self.out(r, obj), status=status)
        for w in warnings:
            header = warning_header(w)
            if header is not None:
                resp.headers.add("Warning", header)
        return resp

    async def _create(self, request: web.Request, t: Target) -> web.Response:
        if t.resource.kind in CREATE_ONLY:
            _refuse_table(request)
        data = await self._body(request)
        body = Body()
        obj = bodies.decode(data, request.headers.get("Content-Type"), t.resource.kind, body, t.resource.custom)
        obj = self._check_body(t, obj)
        if t.resource.kind in reviews.REVIEWS:
            return self._json(reviews.review(obj, self.store, self.token, request[authn.USER_KEY]), status=201)
        dry = self._dry_run(request)
        obj, warnings = fieldvalidation.decode(self, request, t, obj, "CreateOptions", body)
        warnings += _unmodelled(obj) + fieldvalidation.strategy_warnings(self, t.resource, obj, None, None)
        warnings += _protobuf_dropped(request)
        obj = patching.managed_on_write(self, request, t, {}, obj, None)
        hooks = self._webhooks(request, t, "CREATE", obj, dry, warnings)
        created = self.store.create(obj, by=self._user(request), dry_run=dry, webhooks=hooks)
        self.clock.settle()
        return self._respond(created, t.resource, 201, warnings)

    async def _update(self, request: web.Request, t: Target, subresource: str | None = None) -> web.Response:
        data = await self._body(request)
        body = Body()
        obj = bodies.decode(data, request.headers.get("Content-Type"), t.resource.kind, body, t.resource.custom)
        obj = self._check_body(t, obj, name=t.name)
        dry = self._dry_run(request)
        obj, warnings = fieldvalidation.decode(self, request, t, obj, "UpdateOptions", body)
        warnings += _protobuf_dropped(request)
        if subresource is None:
            warnings += _unmodelled(obj)
        live = self.store.try_get(t.resource.storage_kind, t.namespace, t.name or "")
        if live is None:
            raise self.store_not_found(t)
        warnings += fieldvalidation.strategy_warnings(self, t.resource, obj, live, subresource)
        obj = patching.managed_on_write(self, request, t, live, obj, subresource)
        hooks = self._webhooks(request, t, "UPDATE", obj, dry, warnings, subresource)
        out = self.store.update(obj, by=self._user(request), subresource=subresource, dry_run=dry, webhooks=hooks)
        self.clock.settle()
        return self._respond(out, t.resource, 200, warnings)

    async def _patch(self, request: web.Request, t: Target, subresource: str | None = None) -> web.Response:
        r = t.resource
        ptype = patching.patch_type(request.headers.get("Content-Type"), r.custom)
        data = await self._body(request)
        dry = self._dry_run(request)
        current = self.store.try_get(r.storage_kind, t.namespace, t.name or "")
        if current is None:
            if ptype != patching.APPLY:
                raise self.store_not_found(t)
            # an apply creates what does not exist (handlers/patch.go applyPatcher with an empty live object)
            obj, warnings = patching.patched(self, request, t, {}, {}, data, ptype, subresource)
            uid = (obj.get("metadata") or {}).get("uid")
            if uid:
                # handlers/patch.go applyPatch: a uid names an object that exists
                res = f"{r.resource}.{r.group}" if r.group else r.resource
                raise conflict(res, t.name or "", f"uid mismatch: the provided object specified uid {uid}, "
                                                         "and no existing object was found")
            obj = self._check_body(t, obj, name=t.name)
            warnings += fieldvalidation.strategy_warnings(self, r, obj, None, subresource)
            hooks = self._webhooks(request, t, "CREATE", obj, dry, warnings)
            created = self.store.create(obj, by=self._user(request), dry_run=dry, webhooks=hooks)
            self.clock.settle()
            return self._respond(created, r, 201, warnings)
        await self.convertible(r, [current])
        shown = self.out(r, current)
        new, warnings = patching.patched(self, request, t, current, clone(shown), data, ptype, subresource)
        new = self._check_body(t, new, name=t.name)
        warnings += fieldvalidation.strategy_warnings(self, r, new, current, subresource)
        # a patch is applied to the object it read: a concurrent write in between is a conflict, unless the
        # patch names no resourceVersion (handlers/patch.go retries those on the new object; here nothing
        # can come in between)
        new["metadata"].setdefault("resourceVersion", current["metadata"]["resourceVersion"])
        hooks = self._webhooks(request, t, "UPDATE", new, dry, warnings, subresource, "PatchOptions")
        out = self.store.update(new, by=self._user(request), subresource=subresource, verb="patch", dry_run=dry,
                                webhooks=hooks)
        self.clock.settle()
        return self._respond(out, r, 200, warnings)

    def _webhooks(self, request: web.Request, t: Target, operation: str, obj: Obj, dry: bool,
                  warnings: list[str], subresource: str | None = None, options_kind: str = "",
                  options: Obj | None = None) -> webhooks.Webhooks | None:
        """The request's admission webhooks, or None when no webhook configuration is stored. Their Warning
        headers are added to ``warnings`` as they answer; a webhook configuration written is answered with
        the assumption podlife makes about them (webhooks.ASSUMPTION)."""
        r = t.resource
        if r.group == webhooks.GROUP and r.kind in ("MutatingWebhookConfiguration",
                                                    "ValidatingWebhookConfiguration") and operation != "DELETE":
            warnings += webhooks.config_warnings(obj)
        if not webhooks.configured(self.store):
            return None
        md = obj.get("metadata") or {}
        opts: Obj | None = None   # a CONNECT's options are its object (handlers/rest.go ConnectResource)
        if operation != "CONNECT":
            kind = options_kind or {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions"}.get(operation,
                                                                                             "DeleteOptions")
            opts = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
            if dry:
                opts["dryRun"] = ["All"]
            if request.query.get("fieldManager"):
                opts["fieldManager"] = request.query["fieldManager"]
            if options:
                opts.update({k: v for k, v in options.items() if k not in ("kind", "apiVersion")})
        # a subresource of a kind of its own (Scale, Eviction, Binding, the connect options) is sent as that kind
        sub_kind = (r.subresource(subresource) or ("",))[0] if subresource else ""
        own = bool(sub_kind) and sub_kind != r.kind
        a = webhooks.Attributes(operation, r.group, r.version, r.resource, obj["kind"] if own else r.kind,
                                r.namespaced, (t.namespace or md.get("namespace") or "") if r.namespaced else "",
                                t.name or md.get("name") or "", subresource or "", request[authn.USER_KEY], dry, opts,
                                warnings, obj.get("apiVersion") or "" if own else "")
        live = any(kl.runtime.writes_logs for kl in self.cluster.kubelets.values())
        decode = functools.partial(fieldvalidation.custom_write, self, r) if r.custom and not subresource else None
        return webhooks.Webhooks(self.store, a, live, decode)

    async def subresource_admission(self, request: web.Request, t: Target, operation: str, obj: Obj,
                                    old: Obj | None = None) -> Obj:
        """A write to a subresource of its own kind (scale, eviction, binding) through the webhooks, its body
        as the object (the handlers' admission of a create or update of the subresource)."""
        hooks = self._webhooks(request, t, operation, obj, self._dry_run(request), [], t.sub)
        return obj if hooks is None else await hooks.admission(obj, old)

    async def connect_admission(self, request: web.Request, t: Target) -> None:
        """A CONNECT (exec, attach, portforward) goes through admission with its options as the object
        (handlers/rest.go ConnectResource), before the connection is made."""
        opts = webhooks.connect_options(t.sub or "", request.query)
        hooks = self._webhooks(request, t, "CONNECT", opts, False, [], t.sub)
        if hooks is not None:
            await hooks.admission(opts, None)

    def store_not_found(self, t: Target) -> ApiError:
        g = t.resource.group
        res = f"{t.resource.resource}.{g}" if g else t.resource.resource
        return ApiError(404, "NotFound", f'{res} "{t.name}" not found')

    def _delete_options(self, request: web.Request, body: dict[str, Any]) -> DeleteOptions:
        q = request.query
        grace = bodies.grace_period(body.get("gracePeriodSeconds", q.get("gracePeriodSeconds")))
        policy = body.get("propagationPolicy", q.get("propagationPolicy"))
        orphan = body.get("orphanDependents", q.get("orphanDependents"))
        if policy is None and orphan is not None:
            policy = "Orphan" if orphan in (True, "true") else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise ApiError(422, "Invalid", f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                                           f'value: "{policy}": supported values: "Foreground", "Background", '
                                           '"Orphan", "nil"')
        pre = body.get("preconditions") or {}
        return DeleteOptions(grace_period_seconds=grace, uid=pre.get("uid"),
                             resource_version=pre.get("resourceVersion"), propagation_policy=policy)

    async def _delete(self, request: web.Request, t: Target) -> web.Response:
        body = bodies.options(await self._body(request), content_type=request.headers.get("Content-Type"))
        opts = self._delete_options(request, body)
        r = t.resource
        dry = self._dry_run(request, body)
        before = self.store.get(r.storage_kind, t.namespace, t.name or "")
        warnings: list[str] = []
        hooks = self._webhooks(request, t, "DELETE", before, dry, warnings, options=body)
        if hooks is not None:
            # the delete handler's admission: object nil, oldObject the stored one (handlers/delete.go)
            await hooks.admission(None, before)
        if dry:
            return self._respond(before, r, 200, warnings)
        left = self.store.delete(r.storage_kind, t.namespace, t.name or "", by=self._user(request), options=opts)
        self.clock.settle()
        if left is not None:
            return self._respond(left, r, 200, warnings)
        if r.kind in RETURNS_DELETED:
            return self._respond(before, r, 200, warnings)
        return self._json(success(t.name or "", r.group, r.resource, before["metadata"].get("uid")))

    async def _delete_collection(self, request: web.Request, t: Target) -> web.Response:
        body = bodies.options(await self._body(request), content_type=request.headers.get("Content-Type"))
        opts = self._delete_options(request, body)
        matches = self._selectors(request, t)
        r = t.resource
        objs = [o for o in self.store.list(r.storage_kind, t.namespace) if matches(o)]
        if not self._dry_run(request, body):
            for o in objs:
                md = o["metadata"]
                hooks = self._webhooks(request, Target(r, md.get("namespace"), md["name"], None), "DELETE", o,
                                       False, [], options=body)
                if hooks is not None:
                    # registry/store.go DeleteCollection deletes each item through Delete, with its admission:
                    # the first refusal is the answer
                    await hooks.admission(None, o)
                try:
                    self.store.delete(r.storage_kind, md.get("namespace"), md["name"], by=self._user(request),
                                      options=opts)
                except ApiError:
                    pass
            self.clock.settle()
        return self._json({"kind": f"{r.kind}List", "apiVersion": r.api_version,
                           "metadata": {"resourceVersion": str(self.store.resource_version)},
                           "items": [self.out(r, o) for o in objs]})

def _unmodelled(obj: Obj) -> list[str]:
    """The not-modelled fields a written body sets (podlife.api.fieldsupport), as Warning headers, the way the
    API server sends its own warnings (staging/src/k8s.io/apiserver/pkg/warning): "FIELD: message"."""
    from podlife.api.fieldsupport import unmodelled

    return [f"{path}: {message}" for path, message in unmodelled(obj)]


def _protobuf_dropped(request: web.Request) -> list[str]:
    """The fields of a protobuf body whose numbers podlife's table lacks, said rather than silently lost."""
    if bodies.media_type(request.headers.get("Content-Type")) != bodies.PROTOBUF:
        return []
    from podlife.apiserver import protobuf

    return protobuf.dropped_warnings()


def _parse_int(text: str, bits: int = 64) -> int:
    """strconv.ParseInt as the query parameter conversion uses it (runtime.Convert_Slice_string_To_int64)."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    n = int(text)
    if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
        raise bad_request(f'strconv.ParseInt: parsing "{text}": value out of range')
    return n


def _list_options(q: Any) -> None:
    """A list's options as the API server reads them: the query parameters converted (handlers/get.go
    ListResource: DecodeParameters, 400), validated (apimachinery/pkg/apis/meta/internalversion/validation
    ValidateListOptions, 422), and the resourceVersion parsed by the storage (storage.ValidateListOptions:
    400 "invalid resource version")."""
    for name in ("limit", "timeoutSeconds"):
        if q.get(name):
            _parse_int(q[name])
    rv, match = q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
    causes = []
    if match:
        if not rv:
            causes.append(FieldError("resourceVersionMatch", "Forbidden",
                                     "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if q.get("continue"):
            causes.append(FieldError("resourceVersionMatch", "Forbidden",
                                     "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(FieldError("resourceVersionMatch", "Unsupported value",
                                     'supported values: "Exact", "NotOlderThan", ""', match))
        if match == "Exact" and rv == "0":
            causes.append(FieldError("resourceVersionMatch", "Forbidden",
                                     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if q.get("sendInitialEvents"):
        causes.append(FieldError("sendInitialEvents", "Forbidden", "sendInitialEvents is forbidden for list"))
    if causes:   # errors.NewInvalid: one error as it is, several as an aggregate
        text = str(causes[0]) if len(causes) == 1 else "[" + ", ".join(str(c) for c in causes) + "]"
        raise ApiError(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {text}', causes)
    if rv not in ("", "0"):
        # storage APIObjectVersioner.ParseResourceVersion: strconv.ParseUint
        why = "invalid syntax" if not (rv.isascii() and rv.isdigit()) else \
            "value out of range" if int(rv) >= 2 ** 64 else None
        if why is not None:
            raise bad_request(f'invalid resource version: resourceVersion: Invalid value: "{rv}": '
                              f'strconv.ParseUint: parsing "{rv}": {why}')


def _internal_package(group: str) -> str:
    """The Go package of a group's internal types (pkg/apis/<name>; core for the legacy group, whose internal
    Event events.k8s.io shares)."""
    return "core" if group in ("", "events.k8s.io") else group.split(".")[0]


def _encode_continue(key: str, rv: int) -> str:
    # staging/src/k8s.io/apiserver/pkg/storage/continue.go: base64 of {"v":"meta.k8s.io/v1","rv":N,"start":KEY}
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, int]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = orjson.loads(raw)
        return str(doc["start"]).rstrip("\x00"), int(doc["rv"])
    except Exception:  # noqa: BLE001
        raise bad_request("continue key is not valid: invalid continue token") from None


# the media types a built-in resource is served in (negotiation.MediaTypesForSerializer)
_SERVED_MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def _refuse_table(request: web.Request) -> None:
    """A create-only kind (the reviews, Binding) has no TableConvertor (installer.go gives the default one only
    to listers), so negotiation.NegotiateOutputMediaType finds no acceptable clause for an Accept that asks
    only for a Table (endpointsRestrictions.AllowsMediaTypeTransform) and the handler answers 406 before it reads
    the body (handlers/create.go), as the e2e test "should return a 406 for a backend which does not implement
    metadata" (test/e2e/apimachinery/table_conversion.go) expects."""
    accept = request.headers.get("Accept", "")
    if not accept.strip():
        return
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        params = dict(p.split("=", 1) for p in pieces[1:] if "=" in p)
        if "as" not in params and pieces[0] in (*_SERVED_MEDIA_TYPES, "application/*", "*/*"):
            return
    raise ApiError(406, "NotAcceptable",
                   "only the following media types are accepted: " + ", ".join(_SERVED_MEDIA_TYPES))
