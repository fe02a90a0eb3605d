"""The OpenAPI endpoints (kube-openapi's handlers): /openapi/v2 as JSON or gnostic protobuf, /openapi/v3 as an
index of per-group-version documents addressed by their hash (handler3: the current hash is served as
immutable, a stale one redirected to the current one). The documents are podlife.api.openapi's, generated from
the server's route table; they are built once and rebuilt only when the CustomResourceDefinitions change.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from podlife.api import openapi as docs
from podlife.apiserver.status import not_found_path


class OpenAPICache:
    """Encoded documents of one catalog generation (the set of CRDs): built on the first request for them and
    kept until a CustomResourceDefinition changes."""

    def __init__(self) -> None:
        self.generation = -1
        self._v2: dict[str, bytes] = {}
        self._v3: dict[str, tuple[bytes, str]] | None = None
        self._index: bytes | None = None

    def _check(self, server: Any) -> None:
        if self.generation != server.catalog.generation:
            self.generation = server.catalog.generation
            self._v2, self._v3, self._index = {}, None, None

    def _crds(self, server: Any) -> list[dict[str, Any]]:
        return server.store.list("CustomResourceDefinition")

    def v2(self, server: Any, protobuf: bool) -> bytes:
        self._check(server)
        key = "pb" if protobuf else "json"
        if key not in self._v2:
            doc = docs.v2_document(server.minor, self._crds(server))
            self._v2["json"] = docs.encode(doc)
            self._v2["pb"] = docs.v2_protobuf(doc)
        return self._v2[key]

    def _v3_all(self, server: Any) -> dict[str, tuple[bytes, str]]:
        self._check(server)
        if self._v3 is None:
            self._v3 = {}
            for path, doc in docs.v3_documents(server.minor, self._crds(server)).items():
                data = docs.encode(doc)
                self._v3[path] = (data, docs.etag(data))
            self._index = docs.encode(docs.v3_index_of(self._v3))
        return self._v3

    def v3(self, server: Any, path: str) -> tuple[bytes, str] | None:
        return self._v3_all(server).get(path)

    def index(self, server: Any) -> bytes:
        self._v3_all(server)
        assert self._index is not None
        return self._index


_CACHE_ATTR = "_openapi_cache"


async def serve(server: Any, request: web.Request, parts: list[str]) -> web.Response:
    cache = getattr(server, _CACHE_ATTR, None)
    if cache is None:
        cache = OpenAPICache()
        setattr(server, _CACHE_ATTR, cache)
    if parts == ["v2"]:
        accept = request.headers.get("Accept", "")
        if any(t in accept for t in docs.V2_PROTOBUF_ACCEPTED):
            return web.Response(body=cache.v2(server, True), headers={"Content-Type": docs.V2_PROTOBUF})
        return web.Response(body=cache.v2(server, False), headers={"Content-Type": "application/json"})
    if parts == ["v3"]:
        return web.Response(body=cache.index(server), headers={"Content-Type": "application/json"})
    if len(parts) > 1 and parts[0] == "v3":
        path = "/".join(parts[1:])
        found = cache.v3(server, path)
        if found is None:
            raise not_found_path()
        data, tag = found
        wanted = request.query.get("hash")
        if wanted and wanted != tag:
            return web.Response(status=301, headers={"Location": f"/openapi/v3/{path}?hash={tag}"})
        headers = {"Content-Type": "application/json", "ETag": f'"{tag}"'}
        headers["Cache-Control"] = "public, immutable" if wanted else "no-cache, no-store, must-revalidate"
        return web.Response(body=data, headers=headers)
    raise not_found_path()
