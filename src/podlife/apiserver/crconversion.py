"""Custom resources read at a version other than the one they are kept at (apiextensions-apiserver
pkg/apiserver/conversion).

- ``spec.conversion.strategy: None`` (nop_converter.go): only ``apiVersion`` changes.
- ``Webhook`` (webhook_converter.go): a ConversionReview of the first of ``conversionReviewVersions`` the
  server speaks (v1, v1beta1), holding every object to convert and the desired apiVersion, POSTed to the
  webhook's ``clientConfig`` (url, or service resolved as admission webhooks are, caBundle trusted) with its
  ``?timeout=30s``; the answer must carry the request's uid, a ``result.status`` of Success and as many
  objects as were sent, each of the desired apiVersion and the same kind; of their metadata only labels and
  annotations are taken (restoreObjectMeta). Any failure is the request's 500 ("conversion webhook for
  GROUP/VERSION, Kind=KIND failed: …").

podlife keeps a custom resource at the version it was written at (upstream converts it to the storage version
first), so a read at that version needs no call; a read at another version calls the webhook, as upstream
does for an object stored at another version. The conversions of one object version are remembered (a
webhook is a pure function of its input), so watch events, which are encoded synchronously, use what a read
converted; an object no read has converted is sent to a watcher at the version it is kept at, and the watch
response says so in a Warning header.
"""

from __future__ import annotations

import uuid
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.apiserver import webhooks

TIMEOUT = 30   # webhook_converter.go: the conversion webhook's request timeout
WATCH_WARNING = ("podlife: a custom resource kept at another version is sent to a watch unconverted until a get "
                 "or list has called the conversion webhook for it")


def _conversion(crd: Obj | None) -> Obj:
    return ((crd or {}).get("spec") or {}).get("conversion") or {}


def uses_webhook(crd: Obj | None) -> bool:
    return _conversion(crd).get("strategy") == "Webhook"


class Converter:
    """One API server's conversions: the webhook's answers by (uid, resourceVersion, desired apiVersion)."""

    def __init__(self) -> None:
        self._done: dict[tuple[str, str, str], Obj] = {}

    def known(self, obj: Obj, api_version: str) -> Obj | None:
        md = obj.get("metadata") or {}
        return self._done.get((md.get("uid", ""), md.get("resourceVersion", ""), api_version))

    def nop(self, obj: Obj, api_version: str) -> Obj:
        out = clone(obj)
        out["apiVersion"] = api_version
        return out

    def convert(self, crd: Obj | None, obj: Obj, api_version: str) -> Obj:
        """The object at ``api_version`` without a call: itself, the nop converter's, or a remembered answer
        (else itself, unconverted: see WATCH_WARNING)."""
        if obj.get("apiVersion") == api_version:
            return obj
        if not uses_webhook(crd):
            return self.nop(obj, api_version)
        return self.known(obj, api_version) or obj

    async def prepare(self, store: Any, crd: Obj | None, objs: list[Obj], api_version: str, live_pods: bool) -> None:
        """Call the webhook for those of ``objs`` not at ``api_version`` and not yet converted, in one review."""
        if not uses_webhook(crd):
            return
        todo = [o for o in objs if o.get("apiVersion") != api_version and self.known(o, api_version) is None]
        if not todo:
            return
        converted = await self._call(store, crd or {}, todo, api_version, live_pods)
        if len(self._done) > 4096:
            self._done.clear()
        for o, c in zip(todo, converted):
            md = o.get("metadata") or {}
            self._done[(md.get("uid", ""), md.get("resourceVersion", ""), api_version)] = c

    async def _call(self, store: Any, crd: Obj, objs: list[Obj], api_version: str, live_pods: bool) -> list[Obj]:
        hook = _conversion(crd).get("webhook") or {}
        first = objs[0]
        gvk = f"{first.get('apiVersion', '')}, Kind={first.get('kind', '')}"
        try:
            return await _review(store, hook, objs, api_version, live_pods)
        except webhooks.CallFailed as e:
            raise ApiError(500, "InternalError",
                           f"Internal error occurred: conversion webhook for {gvk} failed: {e}") from None


async def _review(store: Any, hook: Obj, objs: list[Obj], api_version: str, live_pods: bool) -> list[Obj]:
    client = hook.get("clientConfig") or {}
    version = next((v for v in hook.get("conversionReviewVersions") or () if v in ("v1", "v1beta1")), None)
    if version is None:
        raise webhooks.CallFailed(f"webhook does not accept known ConversionReview versions (v1, v1beta1), accepts "
                                  f"{hook.get('conversionReviewVersions') or []}")
    shown, url, server_name = webhooks.location(store, client, live_pods, TIMEOUT)
    uid = str(uuid.uuid4())
    review = {"kind": "ConversionReview", "apiVersion": f"apiextensions.k8s.io/{version}",
              "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objs}}
    doc = await webhooks.post(shown, url, server_name, client, review, TIMEOUT, admission=False)
    resp = doc["response"]
    if resp.get("uid") != uid:
        raise webhooks.CallFailed(f'expected response.uid="{uid}", got "{resp.get("uid")}"')
    result = resp.get("result") or {}
    if result.get("status") != "Success":
        raise webhooks.CallFailed(str(result.get("message") or "conversion failed"))
    converted = resp.get("convertedObjects") or []
    if len(converted) != len(objs):
        raise webhooks.CallFailed(f"returned {len(converted)} objects, expected {len(objs)}")
    out = []
    for i, (orig, conv) in enumerate(zip(objs, converted)):
        if not isinstance(conv, dict):
            raise webhooks.CallFailed(f"invalid converted object at index {i}: not an object")
        if conv.get("apiVersion") != api_version:
            raise webhooks.CallFailed(f'invalid converted object at index {i}: invalid apiVersion '
                                      f'"{conv.get("apiVersion")}", expected "{api_version}"')
        if conv.get("kind") != orig.get("kind"):
            raise webhooks.CallFailed(f'invalid converted object at index {i}: invalid kind "{conv.get("kind")}", '
                                      f'expected "{orig.get("kind")}"')
        conv = clone(conv)
        md = clone(orig.get("metadata") or {})
        cmd = conv.get("metadata") if isinstance(conv.get("metadata"), dict) else {}
        for k in ("labels", "annotations"):   # restoreObjectMeta: the rest of the metadata is the original's
            if cmd.get(k):
                md[k] = cmd[k]
            else:
                md.pop(k, None)
        conv["metadata"] = md
        out.append(conv)
    return out
