"""The front proxy's identity: a requestheader CA and the client certificate the aggregator presents to an
extension API server (kubeadm's front-proxy-ca and front-proxy-client, cmd/kubeadm/app/phases/certs), and the
kube-system/extension-apiserver-authentication ConfigMap that tells extension servers to trust it
(pkg/controlplane/controller/clusterauthenticationtrust: getConfigMapDataFor). Made anew for each run of
``podlife up`` (podlife.apiserver.certs); the keys are on disk only while they are loaded."""

from __future__ import annotations

import base64
import json
import ssl
from dataclasses import dataclass
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.apiserver import certs

BY = "kube-apiserver"
NAMESPACE, NAME = "kube-system", "extension-apiserver-authentication"
CLIENT_NAME = "front-proxy-client"   # kubeadm's --requestheader-allowed-names
# kubeadm's kube-apiserver flags (cmd/kubeadm/app/phases/controlplane/manifests.go getAPIServerCommand)
USERNAME_HEADERS = ["X-Remote-User"]
GROUP_HEADERS = ["X-Remote-Group"]
EXTRA_PREFIXES = ["X-Remote-Extra-"]


@dataclass(frozen=True)
class FrontProxy:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    def client_context(self, ca_bundle: str | None, insecure: bool) -> ssl.SSLContext:
        """The transport to an APIService's server (handler_proxy.go updateAPIService): its caBundle verifies
        the server (the system's roots without one), unless insecureSkipTLSVerify; the front-proxy client
        certificate goes with every request."""
        if insecure:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif ca_bundle:
            ctx = ssl.create_default_context(cadata=base64.b64decode(ca_bundle).decode("ascii", "replace"))
        else:
            ctx = ssl.create_default_context()
        certs.load_chain(ctx, self.cert_pem, self.key_pem)
        return ctx


def make() -> FrontProxy:
    ca_pem, ca_key_pem = certs.self_signed("front-proxy-ca")
    cert_pem, key_pem = certs.client_signed_by(ca_pem, ca_key_pem, CLIENT_NAME)
    return FrontProxy(ca_pem, cert_pem, key_pem)


def _json_list(items: list[str]) -> str:
    return json.dumps(items, separators=(",", ":"))   # jsonSerializeStringSlice: json.Marshal


def config_map_data(fp: FrontProxy) -> dict[str, str]:
    """No client-ca-file: podlife authenticates bearer tokens, not client certificates (upstream writes the key
    only with --client-ca-file)."""
    return {"requestheader-allowed-names": _json_list([CLIENT_NAME]),
            "requestheader-client-ca-file": fp.ca_pem.decode(),
            "requestheader-extra-headers-prefix": _json_list(EXTRA_PREFIXES),
            "requestheader-group-headers": _json_list(GROUP_HEADERS),
            "requestheader-username-headers": _json_list(USERNAME_HEADERS)}


def publish(store: Any, fp: FrontProxy) -> None:
    """Write the ConfigMap (its data replaced by this run's: the CA is made anew at each start)."""
    data = config_map_data(fp)
    cur = store.try_get("ConfigMap", NAMESPACE, NAME)
    try:
        if cur is None:
            store.create({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data}, by=BY)
        elif cur.get("data") != data:
            new: Obj = clone(cur)
            new["data"] = data
            store.update(new, by=BY)
    except ApiError:
        pass


def user_headers(name: str, groups: list[str], extra: dict[str, list[str]]) -> list[tuple[str, str]]:
    """client-go transport.SetAuthProxyHeaders: one header per group and extra value, extra keys escaped."""
    from urllib.parse import quote

    out = [(USERNAME_HEADERS[0], name)] + [(GROUP_HEADERS[0], g) for g in groups]
    for key in sorted(extra):
        for v in extra[key]:
            out.append((EXTRA_PREFIXES[0] + quote(key, safe=""), v))
    return out
