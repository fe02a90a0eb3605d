"""Subresources: status, scale, binding, eviction, log, a namespace's finalize and a service account's token.

scale is autoscaling/v1 Scale over spec.replicas (pkg/registry/apps/deployment/storage ScaleREST), binding
sets a pod's node (pods/binding), eviction goes through podlife.api.registry.eviction, log renders what the
simulated container did (its output is not modelled: the lines say what happened to its process).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.podutil import container_names, container_statuses
from podlife.api.schema import type_schema
from podlife.api.selectors import label_selector_as_selector, selector_from_set
from podlife.apiserver import bodies, fieldvalidation, logstream, patching
from podlife.apiserver.status import bad_request, method_not_allowed
from podlife.api.decoding import MAX_REPLICAS

_SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


async def serve(server: Any, request: web.Request, t: Any) -> web.StreamResponse:
    m, sub = request.method, t.sub
    kind = t.resource.storage_kind
    if sub in ("status", "approval", "ephemeralcontainers") or (sub == "finalize" and kind == "Namespace"):
        if m == "GET":
            return server._json(server.out(t.resource, server.store.get(kind, t.namespace, t.name)))
        if m == "PUT":
            return await server._update(request, t, subresource=sub)
        if m == "PATCH" and sub != "finalize":
            return await server._patch(request, t, subresource=sub)
        raise method_not_allowed(m, t.resource.kind)
    if sub == "scale":
        return await _scale(server, request, t)
    if sub == "binding" and m == "POST":
        body = bodies.decode(await server._body(request), request.headers.get("Content-Type"), "Binding")
        binding_type = type_schema(server.minor, "v1", "Binding")
        if binding_type is not None:
            fieldvalidation.check_types({"apiVersion": "v1", "kind": "Binding", **body}, binding_type)
        body = await server.subresource_admission(request, t, "CREATE", {"kind": "Binding", "apiVersion": "v1",
                                                                         **body})
        node = (body.get("target") or {}).get("name")
        if not node:
            raise ApiError(422, "Invalid", f'Binding.meta "{t.name}" is invalid: target.name: Required value')
        uid = ((body.get("metadata") or {}).get("uid"))
        server.store.bind(t.namespace, t.name, node, by=server._user(request), uid=uid)
        server.clock.settle()
        return server._json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "code": 201}, status=201)
    if sub == "eviction" and m == "POST":
        from podlife.api.registry.eviction import evict

        body = bodies.options(await server._body(request), "Eviction", request.headers.get("Content-Type"))
        eviction_type = type_schema(server.minor, "policy/v1", "Eviction")
        if eviction_type is not None:   # decoded into policy/v1 Eviction as any create body
            fieldvalidation.check_types({"apiVersion": "policy/v1", "kind": "Eviction", **body}, eviction_type)
        body = await server.subresource_admission(request, t, "CREATE", {"kind": "Eviction",
                                                                         "apiVersion": "policy/v1", **body})
        opts = body.get("deleteOptions") or {}
        name = (body.get("metadata") or {}).get("name")
        if name and name != t.name:
            raise bad_request("name in URL does not match name in Eviction object")
        try:
            evict(server.store, t.namespace, t.name, server._user(request),
                  bodies.grace_period(opts.get("gracePeriodSeconds")),
                  server.cluster.profile)
        finally:
            server.clock.settle()
        return server._json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "code": 201}, status=201)
    if sub == "token" and m == "POST":
        from podlife.api.registry.tokenrequest import create_token

        body = bodies.decode(await server._body(request), request.headers.get("Content-Type"), "TokenRequest")
        token_type = type_schema(server.minor, "authentication.k8s.io/v1", "TokenRequest")
        if token_type is not None:   # decoded into authentication.k8s.io/v1 TokenRequest as any create body
            fieldvalidation.check_types({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", **body},
                                        token_type)
        return server._json(create_token(server.store, t.namespace, t.name, body), status=201)
    if sub == "log" and m == "GET":
        from podlife.apiserver import podlogs

        pod, container, st = _log_target(server, request, t)
        source = podlogs.container_log(server.cluster, pod, container, st, request.query.get("previous") in
                                       ("true", "1"))
        if source is not None:   # the container's runtime wrote its output (the process runtime)
            return await podlogs.serve(request, source)
        if request.query.get("follow") in ("true", "1"):
            return await _follow_log(server, request, t)
        return await _log(server, request, t)
    if sub == "proxy" and t.resource.resource in ("pods", "services"):
        from podlife.apiserver import podproxy

        where = podproxy.pod_location if t.resource.resource == "pods" else podproxy.service_location
        return await podproxy.forward(request, where(server, t.namespace, t.name),
                                      podproxy.proxied_path(request.path, t.name))
    if sub in ("exec", "attach", "portforward"):
        await server.connect_admission(request, t)
        # over WebSocket, or SPDY/3.1 straight on the connection (kubectl before 1.30)
        upgrade = request.headers.get("Upgrade", "").lower() in ("websocket", "spdy/3.1")
        if upgrade:
            from podlife.apiserver import podattach, podexec, podforward

            pod = server.store.get("Pod", t.namespace, t.name)
            runtime = podexec.runtime_of(server, pod)
            if runtime is not None:   # the container is a real process (the process runtime)
                if sub == "exec":
                    return await podexec.serve(server, request, t, runtime, pod)
                if sub == "attach":
                    return await podattach.serve(request, t, runtime, pod)
                if not logstream.is_websocket(request):
                    return await podforward.serve_spdy(request, pod, runtime.dial(pod))
                return await podforward.serve(request, pod, runtime.dial(pod))
        raise bad_request("Upgrade request required")
    raise method_not_allowed(m, f"{t.resource.resource}/{sub}")


def _scale_of(obj: Obj, r: Any) -> Obj:
    md = obj["metadata"]
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in md},
            "spec": {"replicas": spec.get("replicas", 0)},
            "status": {"replicas": st.get("replicas", 0),
                       "selector": _scale_selector(obj["kind"], spec.get("selector"))}}


def _scale_selector(kind: str, selector: Any) -> str:
    """Scale's status.selector, a label query string ("" for none)."""
    if kind == "ReplicationController":   # core/replicationcontroller/storage: labels.SelectorFromSet(spec.selector)
        return str(selector_from_set(selector))
    try:   # apps/{deployment,replicaset,statefulset}/storage: metav1.LabelSelectorAsSelector(spec.selector)
        return str(label_selector_as_selector(selector))
    except ValueError:   # validation keeps a stored selector well formed
        return ""


async def _scale(server: Any, request: web.Request, t: Any) -> web.Response:
    kind = t.resource.storage_kind
    if kind not in _SCALABLE and not t.resource.custom:
        raise method_not_allowed(request.method, "Scale")
    obj = server.store.get(kind, t.namespace, t.name)
    current = _scale_of(obj, t.resource)
    if request.method == "GET":
        return server._json(current)
    data = await server._body(request)
    if request.method == "PUT":
        new = bodies.decode(data, request.headers.get("Content-Type"), "Scale")
        scale_type = type_schema(server.minor, "autoscaling/v1", "Scale")
        if scale_type is not None:
            new.setdefault("apiVersion", "autoscaling/v1")
            new.setdefault("kind", "Scale")
            fieldvalidation.check_types(new, scale_type)
    elif request.method == "PATCH":
        from podlife.api import patch as patches

        ptype = patching.patch_type(request.headers.get("Content-Type"), custom=False)
        if ptype == patching.APPLY:
            raise method_not_allowed("apply", "Scale")
        new = patches.apply_patch(clone(current), data, ptype, type_schema(server.minor, "autoscaling/v1", "Scale"),
                                  "Ignore", typed=True).object
    else:
        raise method_not_allowed(request.method, "Scale")
    new = await server.subresource_admission(request, t, "UPDATE", {"kind": "Scale", "apiVersion": "autoscaling/v1",
                                                                    **new}, current)
    replicas = (new.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise ApiError(422, "Invalid", f'Scale.autoscaling "{t.name}" is invalid: spec.replicas: Invalid value: '
                                       f"{orjson.dumps(replicas).decode()}: must be greater than or equal to 0")
    if replicas > MAX_REPLICAS:   # podlife's limit, as for the workload itself
        raise ApiError(422, "Invalid", f'Scale.autoscaling "{t.name}" is invalid: spec.replicas: Invalid value: '
                                       f"{replicas}: podlife runs workloads of at most {MAX_REPLICAS:,} pods")
    rv = (new.get("metadata") or {}).get("resourceVersion")
    updated = clone(obj)
    updated.setdefault("spec", {})["replicas"] = replicas
    if rv:
        updated["metadata"]["resourceVersion"] = rv
    updated = patching.managed_on_write(server, request, t, obj, updated, "scale")
    if not server._dry_run(request):
        updated = server.store.update(updated, by=server._user(request),
                                      verb="patch" if request.method == "PATCH" else "update")
        server.clock.settle()
    return server._json(_scale_of(updated, t.resource))


# ---- logs ----------------------------------------------------------------------------------------------------

async def _log(server: Any, request: web.Request, t: Any) -> web.StreamResponse:
    text = "".join(line + "\n" for line in _lines(server, request, t))
    if logstream.is_websocket(request):
        out = await logstream.LogStream.open(request, False)
        await out.write(text.encode())
        return await out.close()
    return web.Response(text=text, content_type="text/plain")


async def _follow_log(server: Any, request: web.Request, t: Any) -> web.StreamResponse:
    """logs -f: the lines so far, then each new one as the kernel moves, until the process exits or the pod
    goes."""
    import asyncio

    first = _lines(server, request, t)
    lines = _lines(server, request, t, tail=False)
    pod = server.store.get("Pod", t.namespace, t.name)
    container = request.query.get("container") or (pod["spec"].get("containers") or [{}])[0].get("name", "")
    timestamps = request.query.get("timestamps") in ("true", "1")
    resp = await logstream.LogStream.open(request, True)
    moved = asyncio.Event()
    server.clock.listeners.append(moved.set)
    await resp.write("".join(line + "\n" for line in first).encode())
    sent = len(lines)
    try:
        while True:
            if len(lines) > sent:
                await resp.write("".join(line + "\n" for line in lines[sent:]).encode())
                sent = len(lines)
            if lines and "process exited" in lines[-1]:
                break
            moved.clear()
            try:
                await asyncio.wait_for(moved.wait(), timeout=5.0)
            except asyncio.TimeoutError:
                if request.transport is None or request.transport.is_closing():
                    break
            if server.store.try_get("Pod", t.namespace, t.name) is None:
                # the pod is gone: what its process did until then, and the stream ends
                rest = log_lines(server, pod, container, False, timestamps) or []
                await resp.write("".join(line + "\n" for line in rest[sent:]).encode())
                break
            lines = _lines(server, request, t, tail=False)
    except (ConnectionResetError, asyncio.CancelledError, ApiError):
        pass
    finally:
        server.clock.listeners.remove(moved.set)
    if request.transport is None or request.transport.is_closing():
        return resp.resp
    return await resp.close()


def _lines(server: Any, request: web.Request, t: Any, tail: bool = True) -> list[str]:
    q = request.query
    pod, container, st = _log_target(server, request, t)
    previous = q.get("previous") in ("true", "1")
    lines = log_lines(server, pod, container, previous, q.get("timestamps") in ("true", "1"))
    if previous and lines is None:
        raise bad_request(f'previous terminated container "{container}" in pod "{t.name}" not found')
    lines = lines or []
    n = q.get("tailLines")
    if tail and n and n.isdigit():
        lines = lines[-int(n):] if int(n) else []
    return lines


def _log_target(server: Any, request: web.Request, t: Any) -> tuple[Obj, str, Obj]:
    """The pod, the container the request names (or the only one) and its status; the kubelet's 400s for a
    container that is not there or has not started (validateContainerLogStatus)."""
    q = request.query
    pod = server.store.get("Pod", t.namespace, t.name)
    spec = pod.get("spec") or {}
    names = container_names(spec)
    container = q.get("container")
    if not container:
        regular = [c["name"] for c in spec.get("containers") or []]
        if len(regular) != 1:
            raise bad_request(f"a container name must be specified for pod {t.name}, choose one of: "
                              f"[{' '.join(regular)}]")
        container = regular[0]
    if container not in names:
        raise bad_request(f"container {container} is not valid for pod {t.name}")
    statuses = {s["name"]: s for s in container_statuses(pod.get("status") or {})}
    st = statuses.get(container) or {}
    waiting = (st.get("state") or {}).get("waiting")
    if waiting is not None and not st.get("lastState", {}).get("terminated"):
        raise bad_request(f'container "{container}" in pod "{t.name}" is waiting to start: '
                          f"{waiting.get('reason', 'ContainerCreating')}")
    if not st:
        raise bad_request(f'container "{container}" in pod "{t.name}" is waiting to start: ContainerCreating')
    return pod, container, st


def log_lines(server: Any, pod: Obj, container: str, previous: bool, timestamps: bool) -> list[str] | None:
    """What the container's process went through in its current (or previous) attempt, from the trace: podlife
    does not model what a program prints, so its log is the story of its process."""
    md = pod["metadata"]
    attempts = server.logs.attempts(f"Pod/{md['namespace']}/{md['name']}", container)
    if previous:
        if len(attempts) < 2:
            return None
        chosen = attempts[-2]
    else:
        chosen = attempts[-1] if attempts else []
    out: list[tuple[float, str]] = []
    for rec in chosen:
        typ, op = rec["type"], rec.get("op")
        if typ == "runtime" and op == "start":
            out.append((rec["t"], f"podlife: process of container {container} started (simulated; its output "
                                  "is not modelled)"))
        elif typ == "signal":
            out.append((rec["t"], f"podlife: received {rec.get('signal')}"))
        elif typ == "hook":
            out.append((rec["t"], f"podlife: {rec.get('hook')} hook {rec.get('phase')}"))
        elif typ == "runtime" and op == "exit":
            out.append((rec["t"], f"podlife: process exited ({rec.get('detail')})"))
    if not timestamps:
        return [text for _, text in out]
    start = server.cluster.trace.start_time
    from datetime import timedelta

    return [(start + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%f000Z") + " " + text for t, text in out]
