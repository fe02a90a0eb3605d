"""The Available condition of APIServices (staging/src/k8s.io/kube-aggregator/pkg/controllers/status/
available_controller.go sync): a local one is always available; a service-backed one is when its Service
exists, has the port, has endpoints with an address for that port, and its server answers
GET /apis/GROUP/VERSION with a 2xx, asked as system:kube-aggregator in system:masters with the front-proxy
client certificate, without verifying the server (a best-effort check).

An APIService is checked when it, a Service or Endpoints change, every 30 s (the informer's resync), and a
failing one again with the work queue's backoff (5 ms doubling to 30 s). One discovery request per check
(upstream sends 5 at once and takes any success). With the simulated runtime no pod serves anything: the check
fails as a refused connection would, and says why. The last resource list fetched is kept for discovery
(podlife.apiserver.aggregator.groups)."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import DELETED
from podlife.apiserver.aggregator import registration, resolve

log = logging.getLogger("podlife.kube-aggregator")
BY = "kube-apiserver"
RESYNC = 30.0
TIMEOUT = 5.0   # the discovery client's Timeout
BACKOFF = (0.005, 30.0)   # workqueue.NewItemExponentialFailureRateLimiter(5ms, 30s)
CHECKER = ("system:kube-aggregator", ["system:masters"])


def _false(reason: str, message: str) -> Obj:
    return {"type": "Available", "status": "False", "reason": reason, "message": message}


def static_condition(store: Any, svc_ref: Obj) -> Obj | None:
    """The condition the Service and its Endpoints decide, or None when only the discovery check can."""
    ns, name, port = svc_ref.get("namespace") or "", svc_ref.get("name") or "", svc_ref.get("port") or 443
    svc = store.try_get("Service", ns, name)
    if svc is None:
        return _false("ServiceNotFound", f'service/{name} in "{ns}" is not present')
    spec = svc.get("spec") or {}
    if (spec.get("type") or "ClusterIP") != "ClusterIP":
        return None
    found = next((p for p in spec.get("ports") or () if p.get("port") == port), None)
    if found is None:
        return _false("ServicePortError", f'service/{name} in "{ns}" is not listening on port {port}')
    port_name = found.get("name") or ""
    eps = store.try_get("Endpoints", ns, name)
    if eps is None:
        return _false("EndpointsNotFound", f'cannot find endpoints for service/{name} in "{ns}"')
    if not any(ss.get("addresses") and any((p.get("name") or "") == port_name for p in ss.get("ports") or ())
               for ss in eps.get("subsets") or ()):
        return _false("MissingEndpoints",
                      f'endpoints for service/{name} in "{ns}" have no addresses with port name "{port_name}"')
    return None


def set_condition(obj: Obj, cond: Obj, timestamp: str) -> Obj:
    """helpers.go SetAPIServiceCondition: lastTransitionTime moves only when the status does."""
    new = clone(obj)
    status = new.setdefault("status", {})
    conds = status.setdefault("conditions", [])
    cur = next((c for c in conds if c.get("type") == cond["type"]), None)
    if cur is None:
        conds.append({**cond, "lastTransitionTime": timestamp})
        return new
    if cur.get("status") != cond["status"]:
        cur["status"], cur["lastTransitionTime"] = cond["status"], timestamp
    cur["reason"], cur["message"] = cond["reason"], cond["message"]
    return new


def discovery_path(obj: Obj) -> str:
    spec = obj.get("spec") or {}
    if obj["metadata"]["name"] == "v1.":   # the legacy group's health check path
        return f"/api/{spec.get('version', '')}"
    return f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"


class AvailableController:
    def __init__(self, store: Any, deliver: Callable[[Callable[[], None]], None], timestamp: Callable[[], str],
                 live_pods: Callable[[], bool], client_context: Callable[[], ssl.SSLContext | None]) -> None:
        self.store = store
        self.deliver = deliver
        self.timestamp = timestamp
        self.live_pods = live_pods
        self.client_context = client_context
        self.resources: dict[str, Obj] = {}   # APIService name -> the APIResourceList its server last gave
        self.fresh: dict[str, bool] = {}      # APIService name -> its last discovery check passed
        self._dirty: set[str] = set()
        self._running: set[str] = set()
        self._failures: dict[str, int] = {}
        self._retrying: set[str] = set()   # names with a back-off retry pending (one each, as the work queue's)
        self._tasks: set[asyncio.Task[Any]] = set()
        # (namespace, name) of a Service → the APIServices that name it: a Service or Endpoints write (every
        # pod's readiness moves one) looks up its few APIServices rather than listing them all
        self._by_service: dict[tuple[str, str], set[str]] = {}

    def start(self) -> None:
        for a in self.store.list("APIService"):
            self._index(a, None)
        for kind in ("APIService", "Service", "Endpoints"):
            self.store.watch(kind, self._changed)
        self._spawn(self._resync())
        self.queue_all()

    async def stop(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _changed(self, type_: str, obj: Obj, old: Obj | None) -> None:
        if obj.get("kind") == "APIService":
            self._index(None, obj) if type_ == DELETED else self._index(obj, old)
            self.queue(obj["metadata"]["name"])
            return
        md = obj["metadata"]   # a Service or Endpoints: the APIServices that name it
        for name in sorted(self._by_service.get((md.get("namespace", ""), md.get("name", "")), ())):
            self.queue(name)

    def _index(self, new: Obj | None, old: Obj | None) -> None:
        for obj, add in ((old, False), (new, True)):
            ref = ((obj or {}).get("spec") or {}).get("service") or {}
            if obj is None or not ref:
                continue
            key, name = (ref.get("namespace", ""), ref.get("name", "")), obj["metadata"]["name"]
            names = self._by_service.setdefault(key, set())
            if add:
                names.add(name)
            else:
                names.discard(name)
                if not names:
                    del self._by_service[key]

    def queue_all(self) -> None:
        for a in self.store.list("APIService"):
            self.queue(a["metadata"]["name"])

    def queue(self, name: str, after: float = 0.0) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return   # not serving (yet): start() queues them all
        if after:
            if name not in self._retrying:
                self._retrying.add(name)
                self._spawn(self._later(name, after))
            return
        self._dirty.add(name)
        if name not in self._running:
            self._running.add(name)
            self._spawn(self._work(name))

    async def _later(self, name: str, after: float) -> None:
        await asyncio.sleep(after)
        self._retrying.discard(name)
        self.queue(name)

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(RESYNC)
            self.queue_all()

    async def _work(self, name: str) -> None:
        try:
            while name in self._dirty:
                self._dirty.discard(name)
                ok = await self._sync(name)
                if ok:
                    self._failures.pop(name, None)
                else:
                    n = self._failures.get(name, 0)
                    self._failures[name] = n + 1
                    self.queue(name, after=min(BACKOFF[0] * 2 ** n, BACKOFF[1]))
        finally:
            self._running.discard(name)

    async def _sync(self, name: str) -> bool:
        obj = self.store.try_get("APIService", None, name)
        if obj is None:
            self.resources.pop(name, None)
            self.fresh.pop(name, None)
            return True
        ref = (obj.get("spec") or {}).get("service")
        if not ref:
            self._write(name, registration.LOCAL_CONDITION)
            return True
        cond = static_condition(self.store, ref)
        if cond is None:
            cond = await self._discovery_check(name, obj, ref)
        else:
            self.fresh[name] = False
        self._write(name, cond)
        return cond["status"] == "True"

    async def _discovery_check(self, name: str, obj: Obj, ref: Obj) -> Obj:
        try:
            host, port = resolve.endpoint(self.store, ref.get("namespace") or "", ref.get("name") or "",
                                          ref.get("port") or 443)
        except resolve.ResolveError as e:
            self.fresh[name] = False
            return _false("FailedDiscoveryCheck", str(e))
        url = f"https://{resolve.host_port(host, port)}{discovery_path(obj)}"
        why = await self._get(name, url)
        self.fresh[name] = why is None
        if why is not None:
            return _false("FailedDiscoveryCheck", f"failing or missing response from {url}: {why}")
        return {"type": "Available", "status": "True", "reason": "Passed", "message": "all checks passed"}

    async def _get(self, name: str, url: str) -> str | None:
        """None when the server answered 2xx (its resource list kept), else Go's http.Client error."""
        if not self.live_pods():
            return (f'Get "{url}": dial tcp {url.split("/")[2]}: connect: connection refused (podlife: the simulated '
                    "runtime's pods serve nothing; an extension API server answers with podlife up --runtime "
                    "process)")
        from podlife.apiserver.aggregator.frontproxy import user_headers

        ctx = self.client_context()
        if ctx is None:
            return f'Get "{url}": podlife: the front proxy has no client certificate'
        headers = [("Accept", "application/json"), *user_headers(CHECKER[0], CHECKER[1], {})]
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(url, ssl=ctx, headers=headers, allow_redirects=False,
                                       timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as resp:
                    body = await resp.read()
                    if not 200 <= resp.status < 300:
                        return f"bad status from {url}: {resp.status}"
        except TimeoutError:
            return f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        except aiohttp.ClientConnectorError as e:
            errno = e.os_error.errno
            import os

            why = os.strerror(errno).lower() if errno else str(e.os_error)
            return f'Get "{url}": dial tcp {e.host}:{e.port}: connect: {why}'
        except (aiohttp.ClientError, OSError) as e:
            return f'Get "{url}": {e}'
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and doc.get("kind") == "APIResourceList":
            self.resources[name] = doc
        return None

    def _write(self, name: str, cond: Obj) -> None:
        def write() -> None:
            cur = self.store.try_get("APIService", None, name)
            if cur is None:
                return
            new = set_condition(cur, cond, self.timestamp())
            if new.get("status") == cur.get("status"):
                return   # updateAPIServiceStatus: no write when nothing changed
            before: Obj = next((c for c in (cur.get("status") or {}).get("conditions") or ()
                           if c.get("type") == "Available"), {})
            if before.get("status") != cond["status"]:
                log.info('"changing APIService availability" name="%s" oldStatus="%s" newStatus="%s" message="%s" '
                         'reason="%s"', name, before.get("status", "Unknown"), cond["status"], cond["message"],
                         cond["reason"])
            try:
                self.store.update(new, by=BY, subresource="status")
            except ApiError:
                self.queue(name)
        self.deliver(write)
