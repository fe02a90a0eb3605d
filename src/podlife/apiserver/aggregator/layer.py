"""The aggregation layer as the API server holds it: the local APIServices registered when it is built; the
front proxy's certificates, the extension-apiserver-authentication ConfigMap and the available-condition
controller once it serves; which requests go to an extension server; the aggregated groups for discovery."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from podlife.api.meta import Obj
from podlife.apiserver.aggregator import frontproxy, groups, registration
from podlife.apiserver.aggregator.available import AvailableController
from podlife.apiserver.aggregator.crdregistration import CRDRegistration
from podlife.apiserver.aggregator.proxy import Proxy

log = logging.getLogger("podlife.kube-aggregator")


class Aggregator:
    def __init__(self, api: Any) -> None:
        self.api = api
        self.store = api.store
        from podlife.apiserver.resources import builtin_resources

        # the groups podlife serves itself: never handed to a Service, whatever their APIService says (without
        # RBAC, any pod's token could otherwise point apps/v1 at its own Service and read everyone's requests)
        self.builtin_groups = frozenset(r.group for r in builtin_resources(api.minor))
        self.front: frontproxy.FrontProxy | None = None
        self.proxy = Proxy(self.store, None)
        self.controller: AvailableController | None = None
        registration.register(self.store, api.catalog.groups(), api.cluster.trace.timestamp())
        CRDRegistration(self.store, api.cluster.trace.timestamp).start()

    def start(self) -> None:
        """From the running event loop, when the server is about to answer."""
        try:
            self.front = frontproxy.make()
        except (OSError, Exception) as e:  # noqa: BLE001 - without its certificate there is no front proxy; said
            log.warning("kube-aggregator: no front-proxy certificate (%s): extension API servers are not reached", e)
        if self.front is not None:
            self.proxy.front = self.front
            self.api.clock.deliver(lambda: frontproxy.publish(self.store, self.front))
        cluster = self.api.cluster
        self.controller = AvailableController(
            self.store, self.api.clock.deliver, cluster.trace.timestamp,
            lambda: any(kl.runtime.writes_logs for kl in cluster.kubelets.values()),
            lambda: self.proxy.context("", True))
        self.controller.start()

    async def stop(self) -> None:
        if self.controller is not None:
            await self.controller.stop()
        await self.proxy.close()

    def target(self, path: str) -> Obj | None:
        """The service-backed APIService a request path (/apis/GROUP/VERSION/…) belongs to, if any."""
        parts = path.split("/", 4)
        if len(parts) < 4 or parts[1] != "apis" or not parts[2] or not parts[3] or parts[2] in self.builtin_groups:
            return None
        found = self.store.try_get("APIService", None, registration.name_of(parts[2], parts[3]))
        return found if found is not None and (found.get("spec") or {}).get("service") else None

    async def serve(self, request: web.Request, apiservice: Obj,
                    user: tuple[str, list[str], dict[str, list[str]]]) -> web.StreamResponse:
        return await self.proxy.serve(request, apiservice, user)

    def _extension(self) -> dict[str, list[Obj]]:
        return groups.extension_apiservices(self.store, set(self.api.catalog.groups()))

    def legacy_groups(self) -> list[tuple[int, str, Any]]:
        return [(groups.group_priority(items), g, groups.group_doc(g, items)) for g, items in self._extension().items()]

    def group_doc(self, group: str) -> Obj | None:
        items = self._extension().get(group)
        return {"kind": "APIGroup", "apiVersion": "v1", **groups.group_doc(group, items)} if items else None

    def aggregated_groups(self) -> list[tuple[int, str, Any]]:
        c = self.controller
        resources, fresh = (c.resources, c.fresh) if c is not None else ({}, {})
        return [(groups.group_priority(items), g,
                 {"metadata": {"name": g, "creationTimestamp": None},
                  "versions": groups.aggregated_versions(items, resources, fresh)})
                for g, items in self._extension().items()]
