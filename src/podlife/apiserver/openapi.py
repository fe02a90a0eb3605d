"""The OpenAPI endpoints (kube-openapi's handlers): /openapi/v2 as JSON or gnostic protobuf, /openapi/v3 as an
index of per-group-version documents addressed by their hash (handler3: the current hash is served as
immutable, a stale one redirected to the current one). The documents are podlife.apiserver.openapispec's, generated from
the server's route table; they are built once and rebuilt only when the CustomResourceDefinitions change.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import orjson
from aiohttp import web

from podlife.api.meta import clone
from podlife.apiserver import openapispec as docs
from podlife.apiserver.status import not_found_path


def _build_v2_json(minor: int, crds: list[dict[str, Any]]) -> bytes:
    return docs.encode(docs.v2_document(minor, crds))


def _build_v2_protobuf(minor: int, crds: list[dict[str, Any]]) -> bytes:
    # only kubectl 1.27 and 1.28 ask for it: made when asked, not with the JSON
    return docs.v2_protobuf(docs.v2_document(minor, crds))


def _build_v3(minor: int, crds: list[dict[str, Any]]) -> tuple[dict[str, tuple[bytes, str]], bytes]:
    encoded = {}
    for path, doc in docs.v3_documents(minor, crds).items():
        data = docs.encode(doc)
        encoded[path] = (data, docs.etag(data))
    return encoded, docs.encode(docs.v3_index_of(encoded))


class OpenAPICache:
    """Encoded documents of one catalog generation and set of CRD specs: built on the first request for them,
    in a worker thread (a second or so of CPU that would otherwise stall every other client), and kept until a
    CustomResourceDefinition's spec changes."""

    def __init__(self) -> None:
        self.generation: Any = None
        self._v2: dict[str, bytes] = {}
        self._v3: dict[str, tuple[bytes, str]] | None = None
        self._index: bytes | None = None
        self._v2_lock = asyncio.Lock()
        self._v3_lock = asyncio.Lock()

    @staticmethod
    def _key(server: Any) -> Any:
        # the routes change with the catalog, the published schemas with any CRD's spec
        return server.catalog.generation, tuple(sorted(
            (c["metadata"].get("name", ""), orjson.dumps(c.get("spec"), option=orjson.OPT_SORT_KEYS))
            for c in server.store.list("CustomResourceDefinition")))

    def _check(self, server: Any) -> None:
        key = self._key(server)
        if self.generation != key:
            self.generation = key
            self._v2, self._v3, self._index = {}, None, None

    async def _build(self, server: Any, build: Callable[[int, list[dict[str, Any]]], Any]) -> Any:
        # the CRDs are copied on the event loop; the thread sees only its copies
        crds = [clone(c) for c in server.store.list("CustomResourceDefinition")]
        return await asyncio.get_running_loop().run_in_executor(None, build, server.minor, crds)

    async def v2(self, server: Any, protobuf: bool) -> bytes:
        key = "pb" if protobuf else "json"
        async with self._v2_lock:
            self._check(server)
            if key not in self._v2:
                generation = self.generation
                built = await self._build(server, _build_v2_protobuf if protobuf else _build_v2_json)
                if generation != self._key(server):   # a CRD changed meanwhile: serve, do not keep
                    return built
                self._v2[key] = built
            return self._v2[key]

    async def _v3_all(self, server: Any) -> tuple[dict[str, tuple[bytes, str]], bytes]:
        async with self._v3_lock:
            self._check(server)
            if self._v3 is None or self._index is None:
                generation = self.generation
                built, index = await self._build(server, _build_v3)
                if generation != self._key(server):
                    return built, index
                self._v3, self._index = built, index
            return self._v3, self._index

    async def v3(self, server: Any, path: str) -> tuple[bytes, str] | None:
        return (await self._v3_all(server))[0].get(path)

    async def index(self, server: Any) -> bytes:
        return (await self._v3_all(server))[1]


_CACHE_ATTR = "_openapi_cache"


async def serve(server: Any, request: web.Request, parts: list[str]) -> web.Response:
    cache = getattr(server, _CACHE_ATTR, None)
    if cache is None:
        cache = OpenAPICache()
        setattr(server, _CACHE_ATTR, cache)
    if parts == ["v2"]:
        accept = request.headers.get("Accept", "")
        if any(t in accept for t in docs.V2_PROTOBUF_ACCEPTED):
            return web.Response(body=await cache.v2(server, True), headers={"Content-Type": docs.V2_PROTOBUF})
        return web.Response(body=await cache.v2(server, False), headers={"Content-Type": "application/json"})
    if parts == ["v3"]:
        return web.Response(body=await cache.index(server), headers={"Content-Type": "application/json"})
    if len(parts) > 1 and parts[0] == "v3":
        path = "/".join(parts[1:])
        found = await cache.v3(server, path)
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
