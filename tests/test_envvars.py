"""The container environment as makeEnvironmentVariables builds it (pkg/kubelet/kubelet_pods.go), and the
command's $(VAR) expansion (ExpandContainerCommandAndArgs)."""

from __future__ import annotations

import base64

from podlife.kubelet.envvars import expand, make_environment


class Store:
    """What the environment reads of podlife.api.store.Store: its objects, its writes per kind and its readers'
    caches (the Services' variables are kept there while no Service is written)."""

    def __init__(self, *objs: dict) -> None:
        self.objs = {(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs}
        self.writes: dict[str, int] = {}
        self.informer_caches: dict[str, object] = {}

    def try_get(self, kind: str, ns: str, name: str) -> dict | None:
        return self.objs.get((kind, ns, name))

    def list(self, kind: str, ns: str) -> list[dict]:
        return [o for (k, n, _name), o in sorted(self.objs.items()) if (k, n) == (kind, ns)]


POD = {"metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "labels": {"app": "web", "tier": "a"},
                    "annotations": {"note": "x"}},
       "spec": {"nodeName": "node-2", "serviceAccountName": "builder"}}
CONFIG = {"kind": "ConfigMap", "metadata": {"namespace": "shop", "name": "cfg"},
          "data": {"MODE": "fast", "LEVEL": "3"}}
SECRET = {"kind": "Secret", "metadata": {"namespace": "shop", "name": "creds"},
          "data": {"password": base64.b64encode(b"s3cret").decode()}}


def env(container: dict, *objs: dict) -> list[tuple[str, str]]:
    return make_environment(Store(CONFIG, SECRET, *objs), POD, container, ["127.0.2.5"], ["127.0.2.1"],
                            {"cpu": "8", "memory": "32Gi"})


def test_env_from_first_then_env_in_order_a_later_value_keeps_its_place() -> None:
    got = env({"envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "APP_"}],
               "env": [{"name": "APP_MODE", "value": "slow"}, {"name": "EXTRA", "value": "1"}]})
    # tmpEnv: the envFrom keys in the ConfigMap's order, APP_MODE replaced where it stands
    assert got == [("APP_MODE", "slow"), ("APP_LEVEL", "3"), ("EXTRA", "1")]


def test_references_expand_against_what_is_declared_before() -> None:
    got = dict(env({"env": [{"name": "A", "value": "one"},
                            {"name": "B", "value": "$(A)-two-$(C)"},   # C is declared after B: left as written
                            {"name": "C", "value": "three"},
                            {"name": "D", "value": "$$(A) costs $$5"}]}))
    assert got == {"A": "one", "B": "one-two-$(C)", "C": "three", "D": "$(A) costs $5"}
    assert expand("run --mode=$(MODE)", {"MODE": "fast"}) == "run --mode=fast"


def test_downward_api_fields() -> None:
    refs = ["metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
            "status.podIP", "status.podIPs", "status.hostIP", "metadata.labels['tier']", "metadata.labels"]
    got = env({"env": [{"name": f"V{i}", "valueFrom": {"fieldRef": {"fieldPath": r}}} for i, r in enumerate(refs)]})
    # pkg/fieldpath FormatMap: the whole map as sorted key="value" lines
    assert [v for _, v in got] == ["web-1", "shop", "u-1", "node-2", "builder", "127.0.2.5", "127.0.2.5",
                                   "127.0.2.1", "a", 'app="web"\ntier="a"']


def test_config_map_and_secret_keys_and_an_optional_missing_key() -> None:
    got = env({"env": [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "MODE"}}},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
        {"name": "GONE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "nope", "optional": True}}}]})
    assert got == [("MODE", "fast"), ("PASSWORD", "s3cret")]


def test_resource_fields_divided_and_rounded_up_with_the_node_as_the_default_limit() -> None:
    got = env({"resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "100Mi"}},
               "env": [{"name": "CPU_REQ_M", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu",
                                                                               "divisor": "1m"}}},
                       {"name": "CPU_REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu"}}},
                       {"name": "MEM_GI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                                            "divisor": "1Gi"}}},
                       {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}]})
    # 250m / 1m = 250; 0.25 cores rounds up to 1; 100Mi in Gi rounds up to 1; no cpu limit: the node's 8
    assert got == [("CPU_REQ_M", "250"), ("CPU_REQ", "1"), ("MEM_GI", "1"), ("CPU_LIMIT", "8")]


def _service(ns: str, name: str, ip: str, *ports: dict) -> dict:
    return {"kind": "Service", "metadata": {"namespace": ns, "name": name}, "spec": {"clusterIP": ip,
                                                                                   "ports": list(ports)}}


KUBERNETES = _service("default", "kubernetes", "10.96.0.1", {"name": "https", "port": 443, "protocol": "TCP"})
CART = _service("shop", "cart-db", "10.96.4.7", {"name": "sql", "port": 5432, "protocol": "TCP"},
                {"port": 9187, "protocol": "UDP"})
HEADLESS = _service("shop", "peers", "None", {"port": 80})
ELSEWHERE = _service("other", "far", "10.96.9.9", {"port": 80})


def test_service_links_follow_the_container_s_own_variables_and_feed_references() -> None:
    # envvars.FromServices: HOST, PORT (first port), PORT_<NAME>, and the Docker link variables per port; the
    # kubernetes Service of default always, the namespace's own per enableServiceLinks; no headless Service
    got = dict(env({"env": [{"name": "DB", "value": "$(CART_DB_SERVICE_HOST):$(CART_DB_SERVICE_PORT)"},
                            {"name": "KUBERNETES_SERVICE_PORT", "value": "mine"}]},
                   KUBERNETES, CART, HEADLESS, ELSEWHERE))
    assert got == {
        "DB": "10.96.4.7:5432", "KUBERNETES_SERVICE_PORT": "mine",
        "CART_DB_SERVICE_HOST": "10.96.4.7", "CART_DB_SERVICE_PORT": "5432", "CART_DB_SERVICE_PORT_SQL": "5432",
        "CART_DB_PORT": "tcp://10.96.4.7:5432", "CART_DB_PORT_5432_TCP": "tcp://10.96.4.7:5432",
        "CART_DB_PORT_5432_TCP_PROTO": "tcp", "CART_DB_PORT_5432_TCP_PORT": "5432",
        "CART_DB_PORT_5432_TCP_ADDR": "10.96.4.7", "CART_DB_PORT_9187_UDP": "udp://10.96.4.7:9187",
        "CART_DB_PORT_9187_UDP_PROTO": "udp", "CART_DB_PORT_9187_UDP_PORT": "9187",
        "CART_DB_PORT_9187_UDP_ADDR": "10.96.4.7",
        "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
        "KUBERNETES_PORT": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443",
        "KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_PORT": "443",
        "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1"}
    unlinked = make_environment(Store(KUBERNETES, CART), {**POD, "spec": {**POD["spec"], "enableServiceLinks": False}},
                                {}, [], [], {})
    assert sorted(k for k, _v in unlinked) == ["KUBERNETES_PORT", "KUBERNETES_PORT_443_TCP",
                                               "KUBERNETES_PORT_443_TCP_ADDR", "KUBERNETES_PORT_443_TCP_PORT",
                                               "KUBERNETES_PORT_443_TCP_PROTO", "KUBERNETES_SERVICE_HOST",
                                               "KUBERNETES_SERVICE_PORT", "KUBERNETES_SERVICE_PORT_HTTPS"]


def test_service_variables_follow_the_services_written_between_two_containers() -> None:
    """The Services' variables are kept while no Service is written: a Service created, then deleted, shows in
    the next container's environment and then leaves it, as a fresh reading of the Services gives."""
    from datetime import datetime, timezone

    from podlife.cluster import Cluster
    from podlife.cluster.spec import NodeSpec

    c = Cluster(version="1.32", seed=0, start_time=datetime(2025, 1, 1, tzinfo=timezone.utc), nodes=[NodeSpec("n1")])
    pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u-2"}, "spec": {"nodeName": "n1"}}

    def names() -> list[str]:
        return [k for k, _v in make_environment(c.store, pod, {"name": "c"}, [], [], {})]

    before = names()
    assert before[:2] == ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"]
    assert names() == before
    c.store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart-db", "namespace": "default"},
                    "spec": {"ports": [{"name": "sql", "port": 5432}]}}, by="user")
    assert [n for n in names() if n not in before] == [
        "CART_DB_SERVICE_HOST", "CART_DB_SERVICE_PORT", "CART_DB_SERVICE_PORT_SQL", "CART_DB_PORT",
        "CART_DB_PORT_5432_TCP", "CART_DB_PORT_5432_TCP_PROTO", "CART_DB_PORT_5432_TCP_PORT",
        "CART_DB_PORT_5432_TCP_ADDR"]
    c.store.delete("Service", "default", "cart-db", by="user")
    assert names() == before
