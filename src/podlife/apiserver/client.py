"""How ``podlife advance``, ``podlife fault`` and ``podlife trace`` reach a running ``podlife up``: the server,
token and certificate of the kubeconfig it wrote."""

from __future__ import annotations

import base64
import os
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import IO

import orjson
import yaml

from podlife.api import yamlread
from podlife.apiserver.up import CONTEXT, DEFAULT_KUBECONFIG


class ClientError(Exception):
    """The kubeconfig is unusable or the server refused or could not be reached."""


@dataclass
class Endpoint:
    server: str
    token: str | None
    ssl_context: ssl.SSLContext | None

    @classmethod
    def from_kubeconfig(cls, path: str | None) -> "Endpoint":
        # as kubectl: the flag, else $KUBECONFIG (its first file), else the default podlife up writes to
        path = os.path.expanduser(path or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or DEFAULT_KUBECONFIG)
        try:
            with open(path, encoding="utf-8") as f:
                doc = yamlread.safe_load(f.read())
        except OSError as e:
            raise ClientError(f"{path}: {e.strerror}; is podlife up running (it writes this file)?") from None
        except yaml.YAMLError as e:
            raise ClientError(f"{path}: not a kubeconfig: {e}") from None
        try:
            ctx = next(c["context"] for c in doc["contexts"] if c["name"] == doc.get("current-context", CONTEXT))
            cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == ctx["cluster"])
            user = next((u.get("user") or {} for u in doc.get("users") or () if u["name"] == ctx.get("user")), {})
        except (KeyError, TypeError, StopIteration):
            raise ClientError(f"{path}: not a kubeconfig written by podlife up (no current context)") from None
        sslctx = None
        if str(cluster.get("server", "")).startswith("https://"):
            sslctx = ssl.create_default_context()
            if cluster.get("certificate-authority-data"):
                sslctx.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        return cls(str(cluster.get("server", "")).rstrip("/"), user.get("token"), sslctx)

    def open(self, method: str, path: str, body: object | None = None, timeout: float | None = 60.0) -> IO[bytes]:
        data = orjson.dumps(body) if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            return urllib.request.urlopen(req, timeout=timeout, context=self.ssl_context)
        except urllib.error.HTTPError as e:
            try:
                message = orjson.loads(e.read()).get("message") or e.reason
            except (orjson.JSONDecodeError, AttributeError):
                message = e.reason
            raise ClientError(f"{self.server}: {message}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ClientError(f"{self.server}: cannot reach the cluster ({reason}); is podlife up running?") from None

    def call(self, method: str, path: str, body: object | None = None, timeout: float | None = 60.0) -> dict:
        with self.open(method, path, body, timeout=timeout) as resp:
            return orjson.loads(resp.read())
