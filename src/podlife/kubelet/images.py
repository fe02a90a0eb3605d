"""Image pulls: pkg/kubelet/images/image_manager.go EnsureImageExists, with pull backoff."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from podlife.api.meta import Obj
from podlife.kubelet.kuberuntime.manager import Backoff, go_duration

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet


class ImageManager:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.backoff = Backoff(10.0, 300.0)
        self.failing: set[str] = set()     # images whose pulls fail (ImagePullFailure)
        self.pull_seconds: float = 0.0
        self.pull_times: dict[str, float] = {}   # per image, where known (podlife import --calibrate)

    def ensure_image_exists(self, pod: Obj, spec: Obj) -> Generator[simpy.Event, Any, bool]:
        kl = self.kl
        image = spec.get("image", "")
        name = spec["name"]
        uid = pod["metadata"]["uid"]
        policy = spec.get("imagePullPolicy", "IfNotPresent")
        present = kl.runtime.has_image(image)
        if policy == "Never" and not present:
            msg = f'Container image "{image}" is not present with pull policy of Never'
            kl.events.container_event(pod, name, "Warning", "ErrImageNeverPull", msg)
            kl.runtime_manager.reasons[(uid, name)] = ("ErrImageNeverPull", msg)
            return False
        if present and policy != "Always":
            kl.events.container_event(pod, name, "Normal", "Pulled",
                                      f'Container image "{image}" already present on machine')
            return True
        key = f"{uid}_{image}"
        if self.backoff.in_backoff_since_update(key, kl.kernel.now):
            msg = f'Back-off pulling image "{image}"'
            kl.events.container_event(pod, name, "Normal", "BackOff", msg)
            kl.events.container_event(pod, name, "Warning", "Failed", "Error: ImagePullBackOff")
            kl.runtime_manager.reasons[(uid, name)] = ("ImagePullBackOff", msg)
            return False
        kl.events.container_event(pod, name, "Normal", "Pulling", f'Pulling image "{image}"')
        start = kl.kernel.now
        if image in self.failing:
            yield kl.kernel.timeout(self.pull_seconds)
            self.backoff.next(key, kl.kernel.now, kl.kernel.now)
            err = f'rpc error: code = Unknown desc = failed to pull and unpack image "{image}"'
            kl.events.container_event(pod, name, "Warning", "Failed", f'Failed to pull image "{image}": {err}')
            kl.events.container_event(pod, name, "Warning", "Failed", "Error: ErrImagePull")
            kl.runtime_manager.reasons[(uid, name)] = ("ErrImagePull", err)
            return False
        yield from kl.runtime.pull_image(image, self.pull_times.get(image, self.pull_seconds))
        took = kl.kernel.now - start
        msg = f'Successfully pulled image "{image}"'
        if kl.profile.pulled_duration:
            msg += f" in {go_duration_ms(took)}"
        kl.events.container_event(pod, name, "Normal", "Pulled", msg)
        return True


def go_duration_ms(seconds: float) -> str:
    """time.Duration.String for the pull time in the Pulled message."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:.3f}".rstrip("0").rstrip(".") + "ms"
    if seconds < 60:
        return f"{seconds:.9f}".rstrip("0").rstrip(".") + "s"
    return go_duration(seconds)
