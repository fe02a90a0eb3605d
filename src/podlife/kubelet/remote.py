"""The kubelet's CRI client: pkg/kubelet/cri/remote/remote_runtime.go. Every call has a deadline."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from podlife.runtime.cri import Container, RuntimeError_

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet


class RemoteRuntime:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet

    def stop_container(self, c: Container, timeout: int) -> Generator[simpy.Event, Any, str]:
        """StopContainer with deadline runtimeRequestTimeout + timeout; returns an error text or ""."""
        kl = self.kl
        # the kubelet's CRI deadline (remote_runtime.go); dockershim's docker client gives up first, at
        # max(timeout, runtimeRequestTimeout) (libdocker getCustomTimeoutContext)
        deadline = kl.config.runtimeRequestTimeout + timeout
        if kl.runtime.profile.id_scheme == "docker":
            deadline = min(deadline, max(timeout, kl.config.runtimeRequestTimeout))
        # in the runtime: the call survives the kubelet
        call = kl.kernel.process(self._call(kl.runtime.stop_container(c.id, timeout)))
        limit = kl.kernel.timer(deadline)
        yield call | limit
        kl.kernel.cancel(limit)
        err = call.value if call.triggered else kl.runtime.profile.deadline_error
        if err:
            kl.log("stop_container_failed", None, container_id=c.id, error=err)
        return err

    @staticmethod
    def _call(gen: Generator[simpy.Event, Any, Any]) -> Generator[simpy.Event, Any, str]:
        try:
            yield from gen
        except RuntimeError_ as e:
            return str(e)
        return ""
