"""The package's layers, checked on its import graph: no cycle between top-level modules, no
cycle between the modules of one package, and the rules the architecture names
(docs/architecture.md) hold. Imports inside functions and under `TYPE_CHECKING` count: a lazy
import is still a dependency, and a type-only one still ties two modules together."""

from __future__ import annotations

import ast
import collections
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "automemo"


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "automemo"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(tree: ast.AST, known: dict[str, Path]) -> set[str]:
    """The automemo modules a module's code imports: `from automemo.llm import remote` names
    the module automemo.llm.remote, `from automemo.llm import BudgetExceeded` the package."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("automemo"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("automemo"))
    return out


@functools.lru_cache(maxsize=1)
def module_graph() -> dict[str, set[str]]:
    """Module (dotted name; a package is its __init__) -> the modules it imports."""
    known = _modules()
    return {name: _imported(ast.parse(path.read_text()), known) - {name}
            for name, path in known.items()}


def import_graph() -> dict[str, set[str]]:
    """Top-level module -> the top-level modules it imports (itself excluded)."""
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for source, targets in module_graph().items():
        edges[_top(source)].update(t for t in map(_top, targets) if t != _top(source))
    return edges


def _package(module: str) -> str:
    """The package a module belongs to; a package's __init__ belongs to the package itself."""
    return module if (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists() \
        else module.rpartition(".")[0]


def cycles_within_packages(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every set of two or more modules of one package that import each other in a circle
    (strongly connected components of each package's own import graph)."""
    inside = {a: {b for b in targets if b in edges and _package(b) == _package(a)}
              for a, targets in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan; the graph is small enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in inside[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(inside):
        if v not in index:
            visit(v)
    return sorted(found)


def _reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_no_cycle_between_top_level_modules():
    edges = import_graph()
    cycles = sorted((a, b) for a in edges for b in edges[a] if a in _reachable(edges, b))
    assert not cycles, f"import cycles between top-level modules: {cycles}"


def test_no_cycle_between_modules_of_one_package():
    cycles = cycles_within_packages(module_graph())
    assert not cycles, f"modules of one package that import each other in a circle: {cycles}"


def test_the_module_cycle_check_finds_a_circle():
    # A two-module circle, a three-module one through a lazy import, and a package whose
    # __init__ imports a module that imports the package back.
    edges = {
        "automemo.search.loop": {"automemo.search.parallel", "automemo.runs.journal"},
        "automemo.search.parallel": {"automemo.search.loop"},
        "automemo.evaluation.a": {"automemo.evaluation.b"},
        "automemo.evaluation.b": {"automemo.evaluation.c"},
        "automemo.evaluation.c": {"automemo.evaluation.a"},
        "automemo.llm": {"automemo.llm.client"},
        "automemo.llm.client": {"automemo.llm"},
        "automemo.runs.journal": {"automemo.search.loop"},  # another package: not "within"
    }
    assert cycles_within_packages(edges) == [
        ["automemo.evaluation.a", "automemo.evaluation.b", "automemo.evaluation.c"],
        ["automemo.llm", "automemo.llm.client"],
        ["automemo.search.loop", "automemo.search.parallel"],
    ]


def test_named_layer_rules():
    edges = import_graph()
    assert edges["errors"] == set(), "the exception root is the bottom layer: it imports nothing of automemo"
    # Imported inside the sandbox, which mounts the package: stdlib and the exception root only.
    assert edges["contract"] <= {"errors"} and edges["failures"] <= {"errors"}
    assert "benchmarks" not in edges["agents"] and "agents" not in edges["benchmarks"]
    assert not edges["search"] & {"config", "assembly", "cli", "report", "export"}
    assert not edges["runs"] & {"search", "evaluation", "meta", "cli"}
    assert not edges["interaction"] & {"agents", "benchmarks", "evaluation"}
    # adaptation drives serve and search; the service only reads the versions it installs
    assert "adapt" not in edges["serve"] and "adapt" not in edges["search"]


def test_the_serve_wings_stand_under_the_edges_that_use_them():
    """A user's folder on disk (serve.storage) is the same whoever serves it: it imports neither
    the HTTP edge nor the Ray cluster, and neither do the service's own top modules."""
    wings = ("automemo.serve.http", "automemo.serve.cluster")
    modules = module_graph()
    below = {m: targets for m, targets in modules.items()
             if m.startswith("automemo.serve.") and not m.startswith(wings)}
    assert any(m.startswith("automemo.serve.storage.") for m in below)   # the graph sees the wings
    assert {m: sorted(t for t in targets if t.startswith(wings)) for m, targets in below.items()
            if any(t.startswith(wings) for t in targets)} == {}
    # and a user's folder stands below the service: of serve it reads only two pure modules, the
    # defaults and the interleave's credit rule (a trial's counts are read from the recall log)
    storage = {m: {t for t in targets if t.startswith("automemo.serve") and not t.startswith("automemo.serve.storage")}
               for m, targets in below.items() if m.startswith("automemo.serve.storage.")}
    assert {m: sorted(t) for m, t in storage.items() if t - {"automemo.serve.defaults", "automemo.serve.interleave"}} == {}


# The runtime package holds runtime code only. What the benches run in place of a real part
# (automemo.measurements.stand_ins) belongs to the benches: nothing outside `measurements`
# imports it except the command line that registers its commands.
BENCH_IMPORTERS = {"cli"}  # automemo.cli.bench_cmd loads automemo.measurements.<name> by name


def importers_of_bench(edges: dict[str, set[str]]) -> set[str]:
    """Top-level modules outside `measurements` that import it and are not allowed to."""
    return {a for a, targets in edges.items() if "measurements" in targets} - BENCH_IMPORTERS - {"measurements"}


def test_only_the_command_line_imports_the_benches_and_their_stand_ins():
    assert importers_of_bench(import_graph()) == set(), \
        "automemo.measurements (benches and their stand-ins) is imported outside automemo.measurements and automemo.cli"


def test_the_bench_rule_finds_a_runtime_importer():
    edges = {"measurements": {"search"}, "search": {"measurements", "runs"}, "cli": {"measurements", "search"}}
    assert importers_of_bench(edges) == {"search"}


def test_the_graph_sees_real_imports():
    # A checker that parsed nothing would pass the tests above: make sure it sees known edges.
    edges = import_graph()
    assert {"interaction", "contract"} <= edges["benchmarks"]
    assert "errors" in edges["contract"] and "errors" in edges["llm"]
    assert "search" in edges["assembly"] and "runs" in edges["search"]
    modules = module_graph()
    assert "automemo.search.scheduler" in modules["automemo.search.loop"]
    assert "automemo.llm.budget" in modules["automemo.llm.client"]
    assert "automemo.measurements.stand_ins.fakellm" in modules["automemo.measurements.cost"]
