"""The kubelet's volume manager, for the volumes whose source can be missing: pkg/kubelet/volumemanager.

podlife mounts instantly what exists. A configMap or secret volume (or projected source) naming an object that
does not exist, and is not optional, fails MountVolume.SetUp (pkg/volume/configmap, pkg/volume/secret): the
reconciler records a FailedMount event and retries with the operation executor's exponential backoff
(nestedpendingoperations: 500 ms, doubling, at most 2m2s), and SyncPod's WaitForAttachAndMount keeps the
containers from starting, so the pod stays ContainerCreating. Once every volume mounts, the pod is synced.

A runtime that puts volumes on disk (``writes_volumes``: the process runtime) is handed each API-data volume's
files (podlife.kubelet.volumefiles) at mount and again every syncFrequency, as the kubelet's periodic pod sync
remounts them (a ConfigMap's update reaches its volume within the sync period); an item naming a missing key
fails the mount as upstream's SetUp does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.kubelet.tokens import TokenManager
from podlife.kubelet.volumefiles import Payload, PayloadError, volume_payload

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

INITIAL_RETRY = 0.5    # initialDurationBeforeRetry
MAX_RETRY = 122.0      # maxDurationBeforeRetry: 2m2s


def _sources(volume: Obj) -> list[tuple[str, str, bool]]:
    """(kind, name, optional) of the objects a volume needs."""
    out = []
    if "configMap" in volume:
        cm = volume["configMap"] or {}
        out.append(("ConfigMap", cm.get("name", ""), bool(cm.get("optional"))))
    if "secret" in volume:
        sec = volume["secret"] or {}
        out.append(("Secret", sec.get("secretName", ""), bool(sec.get("optional"))))
    for src in ((volume.get("projected") or {}).get("sources") or ()):
        for key, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
            if key in src:
                ref = src[key] or {}
                out.append((kind, ref.get("name", ""), bool(ref.get("optional"))))
    return out


def mount_error(store: Any, namespace: str, volume: Obj) -> str | None:
    for kind, name, optional in _sources(volume):
        if not optional and store.try_get(kind, namespace, name) is None:
            return f'{kind.lower()} "{name}" not found'
    return None


class VolumeManager:
    def __init__(self, kl: Kubelet) -> None:
        self.kl = kl
        self.mounted: set[str] = set()                  # pod UIDs whose volumes are all mounted
        self._retry: dict[str, tuple[float, Any]] = {}  # uid → (current backoff, pending call)
        self._refresh: dict[str, Any] = {}              # uid → the next periodic remount (writes_volumes)
        self._tokens: TokenManager | None = None        # made when a writes_volumes runtime first needs a token

    @property
    def tokens(self) -> TokenManager:
        if self._tokens is None:
            self._tokens = TokenManager(self.kl.store, self.kl.kernel.rng(f"kubelet-tokens:{self.kl.node_name}"))
        return self._tokens

    def wait_for_attach_and_mount(self, pod: Obj) -> bool:
        """True when every volume is mounted; otherwise the reconciler keeps trying and syncs the pod later."""
        uid = pod["metadata"]["uid"]
        if uid in self.mounted:
            return True
        if uid not in self._retry:
            self._attempt(uid, INITIAL_RETRY)
        return uid in self.mounted

    def forget(self, uid: str) -> None:
        self.mounted.discard(uid)
        entry = self._retry.pop(uid, None)
        if entry is not None:
            self.kl.kernel.cancel(entry[1])
        call = self._refresh.pop(uid, None)
        if call is not None:
            self.kl.kernel.cancel(call)
        if self._tokens is not None:
            self._tokens.forget(uid)

    def _attempt(self, uid: str, backoff: float) -> None:
        kl = self.kl
        self._retry.pop(uid, None)
        pod = kl.pod_manager.get(uid)
        if pod is None or pod["metadata"].get("deletionTimestamp") or not kl.running:
            return
        payloads, errors = self._collect(pod)
        failed = bool(errors)
        for name, err in errors:
            kl.events.pod_event(pod, "Warning", "FailedMount", f'MountVolume.SetUp failed for volume "{name}" : {err}')
        if failed:
            call = kl.kernel.call_later(backoff, lambda: self._attempt(uid, min(backoff * 2, MAX_RETRY)))
            self._retry[uid] = (backoff, call)
            return
        first = uid not in self.mounted
        self.mounted.add(uid)
        if kl.runtime.writes_volumes:
            kl.runtime.set_up_volumes(pod, payloads)
            self._refresh[uid] = kl.kernel.call_later(kl.config.syncFrequency, lambda: self._remount(uid))
        if first and backoff > INITIAL_RETRY:   # it waited: the pod worker syncs again now
            kl.pod_workers.update_pod(pod, "sync")

    def _collect(self, pod: Obj) -> tuple[dict[str, Payload], list[tuple[str, str]]]:
        """The files of the API-data volumes (for a writes_volumes runtime) and the volumes that cannot mount."""
        kl = self.kl
        ns = pod["metadata"].get("namespace", "default")
        payloads: dict[str, Payload] = {}
        errors = []
        for vol in pod["spec"].get("volumes") or ():
            err = mount_error(kl.store, ns, vol)
            if err is None and kl.runtime.writes_volumes:
                try:
                    payload = volume_payload(kl.store, pod, vol, [], [kl.node_ip], kl.node_spec.capacity,
                                             lambda source: self.tokens.token(pod, source))
                except PayloadError as e:
                    err = str(e)
                except ApiError as e:   # the TokenRequest failed (projected.go: "failed to fetch token: …")
                    err = f"failed to fetch token: {e.message}"
                else:
                    if payload is not None:
                        payloads[vol.get("name", "")] = payload
            if err is not None:
                errors.append((vol.get("name", ""), err))
        return payloads, errors

    def _remount(self, uid: str) -> None:
        """The periodic sync's remount of a running pod's API-data volumes (writes_volumes runtimes only): a
        volume whose source is gone keeps its files and says FailedMount."""
        kl = self.kl
        self._refresh.pop(uid, None)
        pod = kl.pod_manager.get(uid)
        if uid not in self.mounted or pod is None or not kl.running:
            return
        payloads, errors = self._collect(pod)
        for name, err in errors:
            kl.events.pod_event(pod, "Warning", "FailedMount", f'MountVolume.SetUp failed for volume "{name}" : {err}')
        kl.runtime.set_up_volumes(pod, payloads)
        self._refresh[uid] = kl.kernel.call_later(kl.config.syncFrequency, lambda: self._remount(uid))
