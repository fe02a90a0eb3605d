"""The kubelet's service account token manager: pkg/kubelet/token/token_manager.go.

A projected serviceAccountToken source is filled with a token the kubelet requests (TokenRequest, bound to the
pod) and caches per (account, pod, audience, lifetime); a cached token is requested again once it is older than
80% of its lifetime or 24 hours, less a jitter of up to 10 s (requiresRefresh), and forgotten with its pod.
Only a runtime that writes volume files asks (the process runtime); the simulated ones mount nothing.
"""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj
from podlife.api.registry.tokenrequest import DEFAULT_EXPIRATION, create_token

MAX_TTL = 24 * 60 * 60   # maxTTL
MAX_JITTER = 10.0        # maxJitter


class TokenManager:
    def __init__(self, store: Any, rng: Any) -> None:
        self.store = store
        self.rng = rng
        self._cache: dict[tuple[str, str, str, str, int], tuple[bytes, float, float]] = {}  # → token, iat, exp

    def token(self, pod: Obj, source: Obj) -> bytes:
        """The token for a pod's serviceAccountToken projection (projected.go collectData)."""
        md, spec = pod["metadata"], pod["spec"]
        ns, account = md.get("namespace", "default"), spec.get("serviceAccountName") or "default"
        ttl = int(source.get("expirationSeconds") or DEFAULT_EXPIRATION)
        audience = source.get("audience") or ""
        key = (ns, account, md["uid"], audience, ttl)
        now = self.store.kernel.now
        cached = self._cache.get(key)
        if cached is not None and not self._requires_refresh(now, cached[1], cached[2]):
            return cached[0]
        body: Obj = {"spec": {"expirationSeconds": ttl, "audiences": [audience] if audience else None,
                              "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": md["name"],
                                                 "uid": md["uid"]}}}
        out = create_token(self.store, ns, account, body)
        token = out["status"]["token"].encode()
        self._cache[key] = (token, now, now + ttl)
        return token

    def _requires_refresh(self, now: float, iat: float, exp: float) -> bool:
        jitter = float(int(self.rng.random() * MAX_JITTER))   # whole seconds, as time.Duration(f * 10s) / s
        return now > iat + MAX_TTL - jitter or now > exp - (exp - iat) * 0.2 - jitter

    def forget(self, uid: str) -> None:
        """DeleteServiceAccountToken: the pod's tokens go with it."""
        for key in [k for k in self._cache if k[2] == uid]:
            del self._cache[key]
