"""Dynamic admission control: the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins
(staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook).

The API server's write path hands a ``Webhooks`` to the store (podlife.api.store ``create``/``update``): the
store calls ``mutate`` after the built-in mutating plugins (the strategy's PrepareForCreate/Update) and
``validate`` after validation, before the write, as upstream's create and update handlers order admission.
A call is network I/O: the store's code runs in the write's greenlet (podlife.engine.slices), which hands the
call's future to the event loop and resumes when it is done, so other clients' reads are served meanwhile
(writes wait on the kernel's lock, as they wait on the write upstream).

Only API requests are sent to webhooks: the writes of podlife's own controllers (a ReplicaSet's pods) go to
the store directly. That is an assumption the response to a webhook configuration's create says, as a Warning.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from podlife.api.conversion import converter
from podlife.api.decoding import json_kind, number_literal
from podlife.api.defaults import apply_defaults
from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.patch import json_patch
from podlife.api.selectors import matches as selector_matches

GROUP = "admissionregistration.k8s.io"
# predicates/rules/rules.go IsExemptAdmissionConfigurationResource
EXEMPT_KINDS = frozenset({"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                          "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"})
DEFAULT_TIMEOUT = 10   # admissionregistration/v1 defaults: timeoutSeconds 10
ASSUMPTION = ("podlife: admission webhooks are called for API requests only; writes made by podlife's own "
              "controllers (for example the pods of a ReplicaSet) are not sent to webhooks")


@dataclass
class Attributes:
    """admission.Attributes of one request."""
    operation: str                     # CREATE, UPDATE, DELETE
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    namespace: str
    name: str
    subresource: str
    user: Obj                          # the requester's UserInfo (podlife.apiserver.authn)
    dry_run: bool
    options: Obj | None
    warnings: list[str] = field(default_factory=list)
    kind_api_version: str = ""         # a subresource's own kind's (policy/v1 Eviction), else the resource's


def config_warnings(obj: Obj) -> list[str]:
    """What podlife says when a webhook configuration is written: the writes it does not send, and the
    matchConditions it does not evaluate."""
    out = [ASSUMPTION]
    for hook in obj.get("webhooks") or ():
        if isinstance(hook, dict) and hook.get("matchConditions"):
            out.append(f'podlife: webhooks[].matchConditions are not evaluated: "{hook.get("name")}" is called for '
                       "every request its rules and selectors match")
    return out


# the options kinds of the connect subresources (pkg/apis/core/v1 PodExecOptions, PodAttachOptions,
# PodPortForwardOptions) and their query parameters
_CONNECT = {"exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}


def connect_options(sub: str, query: Any) -> Obj:
    """The options object a CONNECT is admitted with, from its query (the stream flags, container,
    command, ports)."""
    opts: Obj = {"kind": _CONNECT[sub], "apiVersion": "v1"}
    if sub == "portforward":
        ports = [int(p) for v in query.getall("ports", []) for p in v.split(",") if p.strip().isdigit()]
        if ports:
            opts["ports"] = ports
        return opts
    for flag in ("stdin", "stdout", "stderr", "tty"):
        if query.get(flag) in ("true", "1"):
            opts[flag] = True
    if query.get("container"):
        opts["container"] = query["container"]
    if sub == "exec":
        opts["command"] = query.getall("command", [])
    return opts


def configured(store: Any) -> bool:
    return bool(store.list("MutatingWebhookConfiguration") or store.list("ValidatingWebhookConfiguration"))


def _hooks(store: Any, kind: str) -> list[Obj]:
    # generic/webhook.go: configurations sorted by name, each one's webhooks in their order
    out: list[Obj] = []
    for cfg in sorted(store.list(kind), key=lambda c: c["metadata"]["name"]):
        out.extend(h for h in cfg.get("webhooks") or () if isinstance(h, dict))
    return out


# ---- matching: predicates/rules, predicates/namespace, predicates/object -------------------------------------

def _wild(items: Any, value: str) -> bool:
    return any(i == "*" or i == value for i in items or ())


def rule_matches(rule: Obj, a: Attributes) -> bool:
    """predicates/rules/rules.go Matcher.Matches."""
    scope = rule.get("scope") or "*"
    is_ns = a.group == "" and a.resource == "namespaces"
    if scope == "Namespaced" and (is_ns or not a.namespace):
        return False
    if scope == "Cluster" and not (is_ns or not a.namespace):
        return False
    if not any(op in ("*", a.operation) for op in rule.get("operations") or ()):
        return False
    if not _wild(rule.get("apiGroups"), a.group) or not _wild(rule.get("apiVersions"), a.version):
        return False
    for res in rule.get("resources") or ():
        name, _, sub = str(res).partition("/")
        if (name == "*" or name == a.resource) and (sub == "*" or sub == a.subresource):
            return True
    return False


def _selector_matches(selector: Any, labels: dict[str, str]) -> bool:
    if not selector:
        return True   # an empty selector matches everything
    try:
        return selector_matches(selector, labels)
    except ValueError:
        return False   # validation refuses such a configuration; one stored anyway matches nothing


def _namespace_matches(hook: Obj, a: Attributes, store: Any, obj: Obj | None, old: Obj | None) -> bool:
    """predicates/namespace/matcher.go MatchNamespaceSelector: a cluster-scoped object other than a namespace
    always matches; a namespace is matched on its own labels; anything else on its namespace's."""
    selector = hook.get("namespaceSelector")
    if not selector:
        return True
    if a.group == "" and a.resource == "namespaces":
        labels = ((obj or old or {}).get("metadata") or {}).get("labels") or {}
    elif not a.namespaced or not a.namespace:
        return True
    else:
        ns = store.try_get("Namespace", None, a.namespace)
        labels = ((ns or {}).get("metadata") or {}).get("labels") or {}
    return _selector_matches(selector, labels)


def _object_matches(hook: Obj, obj: Obj | None, old: Obj | None) -> bool:
    """predicates/object/matcher.go MatchObjectSelector: the new or the old object's labels."""
    selector = hook.get("objectSelector")
    if not selector:
        return True
    return any(o is not None and _selector_matches(selector, (o.get("metadata") or {}).get("labels") or {})
               for o in (obj, old))


def matches(hook: Obj, a: Attributes, store: Any, obj: Obj | None, old: Obj | None) -> bool:
    if a.group == GROUP and a.kind in EXEMPT_KINDS:
        return False
    # matchPolicy Equivalent would also match a rule naming another served version of the resource: podlife
    # serves each resource in one version, so Exact and Equivalent match alike
    return (any(rule_matches(r, a) for r in hook.get("rules") or () if isinstance(r, dict))
            and _namespace_matches(hook, a, store, obj, old) and _object_matches(hook, obj, old))


# ---- calling: request/admissionreview.go, util/webhook ---------------------------------------------------------

class CallFailed(Exception):
    """webhookutil.ErrCallingWebhook: the webhook could not be called, or answered nonsense."""


def review(a: Attributes, obj: Obj | None, old: Obj | None, uid: str, version: str = "v1") -> Obj:
    """request/admissionreview.go CreateV1AdmissionReview."""
    group, _, kind_version = (a.kind_api_version or f"{a.group}/{a.version}").rpartition("/")
    gvk = {"group": group, "version": kind_version, "kind": a.kind}
    gvr = {"group": a.group, "version": a.version, "resource": a.resource}
    req: Obj = {"uid": uid, "kind": gvk, "resource": gvr, "subResource": a.subresource, "requestKind": gvk,
                "requestResource": gvr, "requestSubResource": a.subresource, "name": a.name,
                "namespace": a.namespace, "operation": a.operation,
                "userInfo": clone(a.user),
                "object": obj, "oldObject": old, "dryRun": a.dry_run, "options": a.options}
    for key in ("subResource", "requestSubResource", "name", "namespace"):   # omitempty
        if not req[key]:
            del req[key]
    return {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}", "request": req}


def _ssl_context(client: Obj) -> ssl.SSLContext:
    bundle = client.get("caBundle")
    if bundle:
        return ssl.create_default_context(cadata=base64.b64decode(bundle).decode("ascii", "replace"))
    return ssl.create_default_context()


def location(store: Any, client: Obj, live_pods: bool, timeout: int) -> tuple[str, str, str | None]:
    """(the URL named in messages, the URL connected to, the TLS server name): clientConfig.url as it is;
    clientConfig.service as the API server's service resolver finds it, https://NAME.NAMESPACE.svc:PORT/PATH
    served by a ready endpoint of the Service's EndpointSlices (pkg/apiserver ResolveEndpoint)."""
    if client.get("url"):
        return client["url"], client["url"], None
    svc_ref = client.get("service") or {}
    ns, name = svc_ref.get("namespace") or "", svc_ref.get("name") or ""
    port = int(svc_ref.get("port") or 443)
    path = svc_ref.get("path") or ""
    host = f"{name}.{ns}.svc"
    shown = f"https://{host}:{port}{path}"
    svc = store.try_get("Service", ns, name)
    if svc is None:
        raise CallFailed(f'failed to call webhook: service "{name}" not found')
    chosen = next((p for p in (svc.get("spec") or {}).get("ports") or () if p.get("port") == port), None)
    if chosen is None:
        raise CallFailed(f'failed to call webhook: no service port {port} found for service "{name}"')
    if not live_pods:
        raise CallFailed(f'failed to call webhook: Post "{shown}?timeout={timeout}s": dial tcp {host}:{port}: '
                         "connect: connection refused (podlife: the simulated runtime's pods serve nothing; a webhook "
                         "behind a Service answers with podlife up --runtime process)")
    for sl in store.list("EndpointSlice", ns):
        if (sl["metadata"].get("labels") or {}).get("kubernetes.io/service-name") != name:
            continue
        target = next((p.get("port") for p in sl.get("ports") or ()
                       if (p.get("name") or "") == (chosen.get("name") or "")), None)
        for ep in sl.get("endpoints") or ():
            if target is not None and (ep.get("conditions") or {}).get("ready", True) and ep.get("addresses"):
                return shown, f"https://{ep['addresses'][0]}:{target}{path}", host
    raise CallFailed(f'failed to call webhook: service "{ns}/{name}" has no ready endpoints')


def _x509(err: Exception, host: str) -> str:
    """An OpenSSL verification failure as Go's crypto/x509 words the common ones."""
    code = getattr(err, "verify_code", None)
    if code in (18, 19, 20, 21):   # self-signed, self-signed in chain, unknown issuer, unable to verify leaf
        return "x509: certificate signed by unknown authority"
    if code == 62:                 # X509_V_ERR_HOSTNAME_MISMATCH
        return f"x509: certificate is not valid for {host}"
    return str(getattr(err, "verify_message", None) or err)


async def post(shown: str, url: str, server_name: str | None, client: Obj, body: Obj, timeout: int,
               admission: bool = True) -> Obj:
    """POST a review (an AdmissionReview, or with ``admission`` False a ConversionReview); its answer."""
    # the request names its timeout in the query, as the rest client does (dispatcher.go callHook)
    query = f"?timeout={timeout}s"
    try:
        ctx = _ssl_context(client)
    except (ValueError, ssl.SSLError) as e:
        raise CallFailed(f"could not get REST client: unable to load root certificates: {e}") from None
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(url + query, data=orjson.dumps(body), ssl=ctx, server_hostname=server_name,
                                    headers={"Content-Type": "application/json", "Accept": "application/json"},
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                data = await resp.read()
                if resp.status >= 300:
                    raise CallFailed(f"failed to call webhook: an error on the server ({data[:200]!r}) has "
                                     f"prevented the request from succeeding")
    except TimeoutError:
        raise CallFailed(f'failed to call webhook: Post "{shown}{query}": context deadline exceeded') from None
    except aiohttp.ClientConnectorCertificateError as e:
        raise CallFailed(f'failed to call webhook: Post "{shown}{query}": tls: failed to verify certificate: '
                         f"{_x509(e.certificate_error, server_name or url)}") from None
    except aiohttp.ClientConnectorError as e:
        # as Go's dialer words it (net.OpError): "dial tcp HOST:PORT: connect: connection refused"
        errno = e.os_error.errno
        why = os.strerror(errno) if errno else str(e.os_error)
        raise CallFailed(f'failed to call webhook: Post "{shown}{query}": dial tcp {e.host}:{e.port}: connect: '
                         f"{why.lower()}") from None
    except (aiohttp.ClientError, OSError) as e:
        raise CallFailed(f'failed to call webhook: Post "{shown}{query}": {e}') from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise CallFailed("received invalid webhook response: the response is not JSON") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("response"), dict):
        raise CallFailed("received invalid webhook response: webhook response was absent")
    wrong = response_type_error(doc["response"]) if admission else ""
    if wrong:
        raise CallFailed(f"failed to call webhook: {wrong}")
    return doc


# the AdmissionResponse fields podlife reads: (its parent field, its name, the Go struct holding it, its Go type,
# the JSON values it takes)
_RESPONSE_FIELDS: tuple[tuple[str, str, str, str, tuple[type, ...]], ...] = (
    ("", "uid", "AdmissionResponse", "types.UID", (str,)),
    ("", "allowed", "AdmissionResponse", "bool", (bool,)),
    ("", "patch", "AdmissionResponse", "[]uint8", (str,)),
    ("", "patchType", "AdmissionResponse", "v1.PatchType", (str,)),
    ("", "warnings", "AdmissionResponse", "[]string", (list,)),
    ("", "status", "AdmissionResponse", "v1.Status", (dict,)),
    ("status", "code", "Status", "int32", (int,)),
    ("status", "message", "Status", "string", (str,)),
    ("status", "reason", "Status", "v1.StatusReason", (str,)),
)


def response_type_error(resp: Obj) -> str:
    """The error the API server's typed decoding of an AdmissionReview meets first in the fields podlife reads
    (encoding/json UnmarshalTypeError: 'json: cannot unmarshal KIND into Go struct field STRUCT.PATH of type
    T'), "" when they decode."""
    for parent, key, struct, go_type, ok in _RESPONSE_FIELDS:
        holder = resp.get(parent) if parent else resp
        if not isinstance(holder, dict):
            continue
        v = holder.get(key)
        path = ".".join(("response", *([parent] if parent else []), key))
        if v is not None and (not isinstance(v, ok) or (ok != (bool,) and isinstance(v, bool))):
            kind = number_literal(v) if go_type == "int32" and isinstance(v, float) else json_kind(v)
            return f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type {go_type}"
        if key == "warnings" and isinstance(v, list):
            bad = next((w for w in v if w is not None and not isinstance(w, str)), None)
            if bad is not None:
                return f"json: cannot unmarshal {json_kind(bad)} into Go struct field {struct}.{path} of type string"
        if go_type == "int32" and isinstance(v, int) and not -(1 << 31) <= v < (1 << 31):
            return f"json: cannot unmarshal number {v} into Go struct field {struct}.{path} of type int32"
    return ""


async def call(store: Any, hook: Obj, a: Attributes, obj: Obj | None, old: Obj | None, live_pods: bool,
               mutating: bool) -> Obj:
    """dispatcher.go callHook: the review POSTed, the response checked (request/admissionreview.go
    VerifyAdmissionResponse)."""
    uid = str(uuid.uuid4())   # the review's identity only, never stored
    client = hook.get("clientConfig") or {}
    timeout = int(hook.get("timeoutSeconds") or DEFAULT_TIMEOUT)
    shown, url, server_name = location(store, client, live_pods, timeout)
    # request/admissionreview.go: the first of the webhook's admissionReviewVersions the server speaks
    version = next((v for v in hook.get("admissionReviewVersions") or () if v in ("v1", "v1beta1")), "v1")
    doc = await post(shown, url, server_name, client, review(a, obj, old, uid, version), timeout)
    resp = doc["response"]
    if resp.get("uid") != uid:
        raise CallFailed(f'received invalid webhook response: expected response.uid="{uid}", '
                         f'got "{resp.get("uid")}"')
    if doc.get("apiVersion") != f"admission.k8s.io/{version}" or doc.get("kind") != "AdmissionReview":
        raise CallFailed(f"received invalid webhook response: expected webhook response of admission.k8s.io/"
                         f'{version}, Kind=AdmissionReview, got {doc.get("apiVersion")}, Kind={doc.get("kind")}')
    if mutating and bool(resp.get("patch")) != (resp.get("patchType") is not None):
        given, missing = ("patch", "patchType") if resp.get("patch") else ("patchType", "patch")
        raise CallFailed(f"received invalid webhook response: webhook returned response.{given} but not "
                         f"response.{missing}")
    return resp


def denied(name: str, result: Obj | None) -> ApiError:
    """errors/statuserror.go ToStatusErr."""
    result = result or {}
    code = int(result.get("code") or 0)
    code = code if code >= 400 else 400
    denied_by = f'admission webhook "{name}" denied the request'
    if result.get("message"):
        message = f"{denied_by}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied_by}: {result['reason']}"
    else:
        message = f"{denied_by} without explanation"
    return ApiError(code, str(result.get("reason") or ""), message)


def call_error(name: str, why: str) -> ApiError:
    """A failing-closed call: apierrors.NewInternalError(ErrCallingWebhook)."""
    return ApiError(500, "InternalError", f'Internal error occurred: failed calling webhook "{name}": {why}')


class Webhooks:
    """The two webhook plugins for one request."""

    def __init__(self, store: Any, a: Attributes, live_pods: bool,
                 decode: Callable[[Obj], None] | None = None) -> None:
        self.store = store
        self.a = a
        self.live_pods = live_pods
        self.decode = decode   # a custom resource's decoding (pruning, defaulting), applied to a patched object
        # a resource served in another version than the one stored: webhooks see (and patch) the served form
        info = store.kinds.get(a.kind)
        self.conv = converter(a.group, a.version, a.kind, info.api_version if info is not None else "")

    def _served(self, obj: Any) -> Any:
        return obj if obj is None or self.conv is None else self.conv[0](obj)

    async def _call(self, hook: Obj, obj: Any, old: Obj | None, mutating: bool) -> Obj:
        return await call(self.store, hook, self.a, self._served(obj), self._served(old), self.live_pods, mutating)

    def _skip_dry_run(self, hook: Obj) -> bool:
        """dispatcher.go: a dry-run request reaches only webhooks without side effects (None, NoneOnDryRun);
        otherwise it is refused (NewDryRunUnsupportedErr)."""
        if not self.a.dry_run:
            return False
        if hook.get("sideEffects") in ("None", "NoneOnDryRun"):
            return False
        raise ApiError(400, "BadRequest", f'admission webhook "{hook.get("name")}" does not support dry run')

    def admit(self, obj: Obj, old: Obj | None) -> None:
        """``mutate`` from the store's synchronous code, the object changed in place."""
        from podlife.engine import slices

        out = slices.wait(self.mutate(obj, old))
        if out is not obj:
            obj.clear()
            obj.update(out)

    def check(self, obj: Obj, old: Obj | None) -> None:
        """``validate`` from the store's synchronous code."""
        from podlife.engine import slices

        slices.wait(self.validate(obj, old))

    async def admission(self, obj: Any, old: Obj | None) -> Any:
        """A request whose handler awaits admission itself (a delete, a connect, a subresource of its own kind):
        the mutating webhooks, then the validating ones; the object as mutated."""
        obj = await self.mutate(obj, old)
        await self.validate(obj, old)
        return obj

    async def mutate(self, obj: Any, old: Obj | None) -> Any:
        """mutating/dispatcher.go Dispatch: each matching webhook in order, its JSONPatch applied; with a
        reinvocationPolicy IfNeeded webhook and a change after its call, those are called once more
        (reinvocation.go)."""
        hooks = _hooks(self.store, "MutatingWebhookConfiguration")
        called: dict[int, Any] = {}   # index → the object as its last call left it
        for rnd in (0, 1):
            for i, hook in enumerate(hooks):
                if rnd == 1 and (hook.get("reinvocationPolicy") != "IfNeeded" or i not in called
                                 or called[i] == obj):
                    continue   # reinvoked only if a later webhook changed the object (reinvocation.go)
                if not matches(hook, self.a, self.store, obj, old):
                    continue
                self._skip_dry_run(hook)
                obj = await self._mutate_one(hook, obj, old)
                called[i] = obj if obj is None else clone(obj)
            if not any(h.get("reinvocationPolicy") == "IfNeeded" for h in hooks):
                break
        return obj

    async def _mutate_one(self, hook: Obj, obj: Any, old: Obj | None) -> Any:
        name = str(hook.get("name") or "")
        try:
            resp = await self._call(hook, obj, old, True)
        except CallFailed as e:
            if hook.get("failurePolicy", "Fail") == "Ignore":
                return obj   # failing open (dispatcher.go: klog "Failed calling webhook, failing open")
            raise call_error(name, str(e)) from None
        self.a.warnings.extend(str(w) for w in resp.get("warnings") or ())
        if not resp.get("allowed"):
            raise denied(name, resp.get("status"))
        patch = resp.get("patch")
        if not patch:
            return obj
        try:
            ops = orjson.loads(base64.b64decode(patch))
        except ValueError as e:
            raise ApiError(500, "InternalError", f"Internal error occurred: {e}") from None
        if not ops:
            return obj
        if obj is None:   # a DELETE: nothing to patch
            raise ApiError(500, "InternalError", f'Internal error occurred: admission webhook "{name}" attempted '
                                                 "to modify the object, which is not supported for this operation")
        if resp.get("patchType") != "JSONPatch":
            if hook.get("failurePolicy", "Fail") == "Ignore":
                return obj   # an ErrCallingWebhook, as a failed call
            raise call_error(name, f'unsupported patch type "{resp.get("patchType")}"')
        try:
            patched = json_patch(clone(self._served(obj)), ops)
            patched = patched if self.conv is None else self.conv[1](patched)
        except ApiError as e:
            # dispatcher.go: a patch that does not apply is apierrors.NewInternalError
            raise ApiError(500, "InternalError", f"Internal error occurred: {e.message}") from None
        # dispatcher.go: the patched object is decoded again (a custom resource pruned), and defaulted
        apply_defaults(patched, self.store.profile)
        if self.decode is not None:
            self.decode(patched)
        return patched

    async def validate(self, obj: Obj | None, old: Obj | None) -> None:
        """validating/dispatcher.go Dispatch: the matching webhooks called in parallel; the first refusal (in
        the webhooks' order: podlife stays deterministic where upstream takes whichever comes first)."""
        hooks = [h for h in _hooks(self.store, "ValidatingWebhookConfiguration")
                 if matches(h, self.a, self.store, obj, old)]
        for h in hooks:
            self._skip_dry_run(h)
        results = await asyncio.gather(*(self._validate_one(h, obj, old) for h in hooks))
        for err in results:
            if err is not None:
                raise err

    async def _validate_one(self, hook: Obj, obj: Obj | None, old: Obj | None) -> ApiError | None:
        name = str(hook.get("name") or "")
        try:
            resp = await self._call(hook, obj, old, False)
        except CallFailed as e:
            return None if hook.get("failurePolicy", "Fail") == "Ignore" else call_error(name, str(e))
        self.a.warnings.extend(str(w) for w in resp.get("warnings") or ())
        return None if resp.get("allowed") else denied(name, resp.get("status"))
