"""The pytest plugin (entry point ``pytest11: podlife``): a live podlife cluster as a fixture.

    def test_rollout(podlife_cluster):
        podlife_cluster.advance_until("deployment/web readyReplicas 3", timeout="10m")

Fixtures: ``podlife_cluster`` (scope from ``--podlife-scope``, default function), ``podlife_cluster_module``,
``podlife_cluster_session``. Options: ``--podlife-version``, ``--podlife-cluster``, ``--podlife-runtime``,
``--podlife-clock`` (manual by default). The marker ``@pytest.mark.podlife(versions=[...], cluster=...,
clock=..., runtime=..., seed=...)`` sets them for a test or module; ``versions`` runs the test once per
version. A failing test's report gets a ``podlife`` section: the cluster's recent Events and an HTML report of
the run. Clusters are started by a warm process (podlife.testing.zygote) made once per session.

Only the standard library and pytest are imported until a cluster is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from podlife.testing.cluster import ClusterOptions, PodlifeCluster, Zygote

_FIXTURES = ("podlife_cluster", "podlife_cluster_module", "podlife_cluster_session")
_ZYGOTE = pytest.StashKey["Zygote | None"]()
_LIVE = pytest.StashKey["list[PodlifeCluster]"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("podlife", "podlife clusters (podlife.testing.plugin)")
    group.addoption("--podlife-version", help="Kubernetes version of the clusters (default: the newest modelled).")
    group.addoption("--podlife-cluster", help="Cluster file the clusters start from (a scenario's spec.cluster "
                                              "and objects).")
    group.addoption("--podlife-runtime", choices=("simulated", "process"), default="simulated",
                    help="Container runtime of the clusters (default simulated).")
    group.addoption("--podlife-clock", choices=("manual", "realtime"),
                    help="Clock of the clusters (default manual: time moves on advance only; realtime with "
                         "--podlife-runtime process, whose real processes live on the wall clock).")
    group.addoption("--podlife-scope", choices=("function", "module", "session"), default="function",
                    help="Scope of the podlife_cluster fixture (default function: a cluster per test).")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "podlife(versions=[...], cluster=PATH, clock=..., runtime=..., seed=N): "
                                       "the podlife cluster of this test (versions: run it once per version)")
    config.stash[_ZYGOTE] = None
    config.stash[_LIVE] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the warm process while the first tests run, if any test asks for a cluster."""
    if os.environ.get("PODLIFE_ZYGOTE", "1") == "0":
        return
    if any(set(_FIXTURES) & set(getattr(item, "fixturenames", ())) for item in session.items):
        session.config.stash[_ZYGOTE] = Zygote()


def pytest_unconfigure(config: pytest.Config) -> None:
    for cluster in config.stash.get(_LIVE, []):   # an interrupted run: whatever teardown did not reach
        cluster.stop()
    zygote = config.stash.get(_ZYGOTE, None)
    if zygote is not None:
        zygote.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("podlife")
    if marker is None or "versions" not in marker.kwargs or "podlife_version" not in metafunc.fixturenames:
        return
    versions = [str(v) for v in marker.kwargs["versions"]]
    metafunc.parametrize("podlife_version", versions, indirect=True, ids=[f"k8s{v}" for v in versions])


@pytest.fixture(scope="session")
def podlife_version(request: pytest.FixtureRequest) -> str | None:
    """The Kubernetes version of the test's cluster (a marker's versions, else --podlife-version)."""
    param = getattr(request, "param", None)
    return str(param) if param is not None else request.config.getoption("--podlife-version")


def _options(request: pytest.FixtureRequest, version: str | None) -> ClusterOptions:
    config = request.config
    marker = request.node.get_closest_marker("podlife")
    kw: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    cluster = kw.get("cluster") or config.getoption("--podlife-cluster")
    if cluster and not os.path.isabs(cluster) and "cluster" in kw:
        cluster = str(Path(str(request.node.path)).parent / cluster)   # a marker's path is the test file's
    runtime = kw.get("runtime") or config.getoption("--podlife-runtime")
    clock = kw.get("clock") or config.getoption("--podlife-clock") or (
        "realtime" if runtime == "process" else "manual")
    return ClusterOptions(version=version, cluster=cluster, runtime=runtime, clock=clock, seed=kw.get("seed"))


def _cluster(request: pytest.FixtureRequest, version: str | None,
             factory: pytest.TempPathFactory) -> Generator[PodlifeCluster, None, None]:
    live = request.config.stash[_LIVE]
    cluster = PodlifeCluster(_options(request, version), request.config.stash[_ZYGOTE],
                             report_dir=lambda: factory.mktemp("podlife-report"))
    live.append(cluster)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        live.remove(cluster)


def _scope(fixture_name: str, config: pytest.Config) -> str:
    return str(config.getoption("--podlife-scope"))


@pytest.fixture(scope=_scope)  # type: ignore[arg-type]
def podlife_cluster(request: pytest.FixtureRequest, podlife_version: str | None,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodlifeCluster]:
    """A live podlife cluster (manual clock unless --podlife-clock realtime), stopped after the test."""
    yield from _cluster(request, podlife_version, tmp_path_factory)


@pytest.fixture(scope="module")
def podlife_cluster_module(request: pytest.FixtureRequest, podlife_version: str | None,
                           tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodlifeCluster]:
    """One live podlife cluster for the tests of a module."""
    yield from _cluster(request, podlife_version, tmp_path_factory)


@pytest.fixture(scope="session")
def podlife_cluster_session(request: pytest.FixtureRequest, podlife_version: str | None,
                            tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodlifeCluster]:
    """One live podlife cluster for the whole session (per version)."""
    yield from _cluster(request, podlife_version, tmp_path_factory)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.failed and call.when == "call":
        funcargs = getattr(item, "funcargs", {})
        for name in _FIXTURES:
            cluster = funcargs.get(name)
            if isinstance(cluster, PodlifeCluster) and cluster.url:
                report.sections.append((f"podlife cluster ({name})", _failure_section(cluster)))
    return report


def _failure_section(cluster: PodlifeCluster) -> str:
    lines = [f"Kubernetes {cluster.version} at {cluster.url}"]
    try:
        lines[0] += f", clock at {cluster.now:g}s"
    except Exception:  # noqa: BLE001 - the section says what it could not read and the test's failure stands
        lines[0] += " (not answering)"
        return "\n".join(lines)
    lines += ["recent events:", cluster.format_events()]
    try:
        lines.append(f"HTML report of the run: file://{cluster.html_report()}")
    except Exception as e:  # noqa: BLE001
        lines.append(f"HTML report: could not be made ({type(e).__name__}: {e})")
    return "\n".join(lines)
