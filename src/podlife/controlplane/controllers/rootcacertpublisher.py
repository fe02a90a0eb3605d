"""The root CA certificate publisher: pkg/controller/certificates/rootcacertpublisher/publisher.go.

Every live namespace holds the ConfigMap ``kube-root-ca.crt`` whose ``ca.crt`` is the cluster's root CA bundle
(RootCAConfigMap, on by default from 1.20). It is created when a namespace appears, recreated when deleted, and
its data and description annotation are put back when changed.

A simulated cluster has no CA, so ``ca.crt`` is a fixed placeholder PEM block (PLACEHOLDER_CA): it has the shape
of a certificate but is not one, and the same in every cluster and run. ``podlife up`` serving TLS publishes the
certificate it serves instead (``publish``), so that in-cluster clients (a pod's kube-api-access volume) verify it.
"""

from __future__ import annotations

import base64

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.store import DELETED, Store
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "root-ca-cert-publisher"
CONFIGMAP = "kube-root-ca.crt"                      # RootCACertConfigMapName
DESCRIPTION_ANNOTATION = "kubernetes.io/description"  # DescriptionAnnotation
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


def _placeholder() -> str:
    body = base64.b64encode(b"podlife placeholder root CA: not a certificate; podlife simulates no cluster CA.")
    lines = [body[i:i + 64].decode() for i in range(0, len(body), 64)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"


PLACEHOLDER_CA = _placeholder()


class RootCACertPublisher:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.store = store
        self.uids = kernel.rng(f"uids:{NAME}")   # a stream of its own: other objects' UIDs and names unchanged
        self.enabled = bool(profile.root_ca_configmap)
        # the description annotation came with the GA publisher (1.21)
        self.annotate = bool(profile.root_ca_description)
        self.ca = PLACEHOLDER_CA   # an imported cluster's own CA bundle instead (podlife.importer.restore)

    def start(self) -> None:
        if not self.enabled:
            return
        for ns in self.store.list("Namespace"):
            self._sync(ns["metadata"]["name"])
        self.store.watch("Namespace", self._on_namespace)
        self.store.watch("ConfigMap", self._on_configmap)

    def publish(self, bundle: str) -> None:
        """The CA bundle changed (controller.go: the publisher syncs every namespace when its root CA changes)."""
        self.ca = bundle
        if self.enabled:
            for ns in self.store.list("Namespace"):
                self._sync(ns["metadata"]["name"])

    def _on_namespace(self, type_: str, ns: Obj, old: Obj | None) -> None:
        if type_ != DELETED:
            self._sync(ns["metadata"]["name"])

    def _on_configmap(self, type_: str, cm: Obj, old: Obj | None) -> None:
        if cm["metadata"]["name"] == CONFIGMAP:
            self._sync(cm["metadata"]["namespace"])

    def _wanted(self) -> tuple[dict[str, str], dict[str, str]]:
        return {"ca.crt": self.ca}, ({DESCRIPTION_ANNOTATION: DESCRIPTION} if self.annotate else {})

    def _sync(self, namespace: str) -> None:
        """syncNamespace: create the ConfigMap, or restore its data and annotation; a namespace being deleted
        is left alone."""
        ns = self.store.try_get("Namespace", None, namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        data, annotations = self._wanted()
        cm = self.store.try_get("ConfigMap", namespace, CONFIGMAP)
        try:
            if cm is None:
                md: dict = {"name": CONFIGMAP, "namespace": namespace}
                if annotations:
                    md["annotations"] = dict(annotations)
                self.store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data},
                                  by=NAME, uids=self.uids)
                return
            have = cm["metadata"].get("annotations") or {}
            if cm.get("data") == data and all(have.get(k) == v for k, v in annotations.items()):
                return
            new = {**cm, "metadata": {**cm["metadata"], "annotations": {**have, **annotations}}, "data": data}
            if not new["metadata"]["annotations"]:
                del new["metadata"]["annotations"]
            new.pop("binaryData", None)
            self.store.update(new, by=NAME)
        except ApiError:
            pass   # the namespace went away, or a newer write: the next event syncs again
