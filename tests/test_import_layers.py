"""The package's declared seams (CONTRIBUTING.md, "Where code lives"): no import cycle among podlife's modules,
the layering rules between its packages, and no module over 1,000 lines.

The graph is built from the source with ``ast``: every ``import`` / ``from ... import`` at module level and
inside functions and classes counts (a function-level import is still a dependency, only a later one); the
body of an ``if TYPE_CHECKING:`` block does not (it never runs).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "podlife"
MAX_LINES = 1000
OVERSIZE_ALLOWED: set[str] = set()   # none: scenario/load.py, the last, was split (issue 24)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in the tree, skipping the bodies of ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    walk_stmt(other)
                continue
            walk_stmt(child)

    def walk_stmt(node: ast.AST) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        walk(node)

    walk(tree)
    return found


def _targets(name: str, node: ast.Import | ast.ImportFrom, modules: set[str]) -> set[str]:
    """The podlife modules one import statement of module ``name`` loads (a ``from pkg import sub`` loads
    the submodule ``pkg.sub``; otherwise the named module itself)."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in modules:
                out.add(alias.name)
        return out
    base = node.module or ""
    if node.level:
        here = name.split(".") if (PACKAGE / Path(*name.split(".")[1:]) / "__init__.py").exists() else \
            name.split(".")[:-1]
        anchor = here[:len(here) - node.level + 1]
        base = ".".join(anchor + ([base] if base else []))
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules:
            out.add(sub)
        elif base in modules:
            out.add(base)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the podlife modules it imports (module- and function-level, TYPE_CHECKING aside)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _targets(name, node, set(modules))
        edges.discard(name)
        graph[name] = edges
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): every component of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def _cycle_in(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One concrete loop through the component's first module (breadth-first, so a shortest one)."""
    members = set(component)
    start = component[0]
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
                if nxt not in parents:
                    parents[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return component


def test_no_import_cycles() -> None:
    graph = import_graph()
    loops = strongly_connected(graph)
    report = "\n".join(f"{len(c)} modules: " + " -> ".join(_cycle_in(c, graph)) for c in loops)
    assert not loops, "import cycles:\n" + report


# The layers (CONTRIBUTING.md, "Where code lives"), bottom up: a package may not import the packages listed
# for it (everything above it).
_ABOVE_API = ("podlife.apiserver", "podlife.kubelet", "podlife.controlplane", "podlife.runtime", "podlife.scenario",
              "podlife.cluster", "podlife.kubectl", "podlife.printers", "podlife.sweep", "podlife.cli")
LAYERS: dict[str, tuple[str, ...]] = {
    # the virtual clock and the kernel: below everything
    "podlife.engine": ("podlife.",),
    # the version table and feature gates: plain data (versions builds on features, never the reverse)
    "podlife.features": ("podlife.",),
    "podlife.versions": ("podlife.api", "podlife.trace", *_ABOVE_API),
    # apimachinery-like values, validation, registry and storage: below every consumer of the API; it
    # may record into the trace (trace.recorder) and read the version table, nothing else
    "podlife.api": ("podlife.trace.html", "podlife.trace.summary", "podlife.trace.klog", "podlife.trace.explain",
                    "podlife.trace.diff", "podlife.trace.figures", "podlife.trace.stream", *_ABOVE_API),
    # the container runtime (CRI) serves the kubelet: it knows nothing of the node or the control plane
    "podlife.runtime": ("podlife.apiserver", "podlife.kubelet", "podlife.controlplane", "podlife.cluster",
                        "podlife.sweep", "podlife.cli"),
    # the node and the control plane talk to each other only through the store
    "podlife.kubelet": ("podlife.apiserver", "podlife.controlplane", "podlife.scenario", "podlife.cluster",
                        "podlife.sweep", "podlife.cli"),
    "podlife.controlplane": ("podlife.apiserver", "podlife.kubelet", "podlife.scenario", "podlife.cluster",
                             "podlife.sweep", "podlife.cli"),
    # the record stream is below everything that records; reports read records, not the live model
    "podlife.trace": ("podlife.api", "podlife.report", *_ABOVE_API),
    "podlife.report": ("podlife.apiserver", "podlife.kubelet", "podlife.controlplane", "podlife.runtime",
                       "podlife.sweep", "podlife.cli"),
    # the live server and the scenario runner are siblings over the cluster; the CLI is on top
    "podlife.scenario": ("podlife.apiserver", "podlife.sweep", "podlife.cli"),
    "podlife.apiserver": ("podlife.sweep", "podlife.cli"),
}
# podlife.scenario.durations parses and prints Go durations; lower layers (runtime behaviour rules, reports) use
# it as a value format. podlife.cluster.contracts holds the interfaces (Protocols) the cluster's parts implement.
SHARED = {"podlife.scenario.durations", "podlife.cluster.contracts"}


def _within(module: str, package: str) -> bool:
    if package.endswith("."):   # every other podlife package
        return module.startswith(package)
    return module == package or module.startswith(package + ".")


def test_layering_rules() -> None:
    graph = import_graph()
    broken = [f"{src} imports {dst}" for src, dsts in sorted(graph.items()) for dst in sorted(dsts - SHARED)
              for layer, banned in LAYERS.items() if _within(src, layer) and not _within(dst, layer)
              for ban in banned if _within(dst, ban)]
    assert not broken, "layering rules broken:\n" + "\n".join(broken)


@pytest.mark.parametrize("module", sorted(_modules()))
def test_module_size(module: str) -> None:
    lines = len(_modules()[module].read_text().splitlines())
    assert module in OVERSIZE_ALLOWED or lines <= MAX_LINES, f"{module} has {lines} lines (at most {MAX_LINES})"


def test_the_graph_sees_function_level_imports() -> None:
    """The checks above only mean something if the walker finds imports inside functions and skips
    TYPE_CHECKING blocks: a small source with both."""
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
                     "def f():\n    import b\n    if True:\n        from c import d\n")
    found = sorted(n.names[0].name if isinstance(n, ast.Import) else f"{n.module}.{n.names[0].name}"
                   for n in _imports(tree))
    assert found == ["b", "c.d", "typing.TYPE_CHECKING"]
    assert strongly_connected({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}}) == [["x", "y", "z"]]
