"""The house keeps its shape: imports point one way (docs/architecture.md), and a test says so.

Every module's imports are read with ``ast`` — at module level, inside functions and under
``TYPE_CHECKING`` alike — and resolved to the modules they load (``from oloproof.x import y`` loads
``oloproof.x.y`` when that is a module; every import also runs each enclosing package's
``__init__``). The test fails on:

- an import cycle between modules;
- an import against the layer order below (a module may import its own layer or lower ones);
- a capability importing another capability (only the composition root, ``oloproof.gate``, lists
  them);
- a package ``__init__`` that imports anything of oloproof (it would tie every submodule to all the
  others);
- an import inside a function without a ``# lazy: start-up`` (or ``# lazy: optional``) comment
  saying why it is not at the top;
- a module over 500 lines;
- ``GITHUB_*`` read outside ``oloproof/action/``.

``python -m pytest tests/test_layers.py -q`` prints each violation with its file and line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "oloproof"
MAX_LINES = 500

# Base first; a module may import modules of its own layer or of lower ones. Patterns: an exact
# module name, or ``name.*`` for every module below ``name`` (the package itself included).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", (
        "oloproof", "oloproof.errors", "oloproof.schema", "oloproof.files", "oloproof.jsonl", "oloproof.identity",
        "oloproof.verdicts", "oloproof.stats.*", "oloproof.process", "oloproof.exits", "oloproof.vcs", "oloproof.inert",
        "oloproof.store", "oloproof.fingerprint", "oloproof.normalise",
    )),
    ("spec", ("oloproof.testset", "oloproof.policy", "oloproof.system", "oloproof.evaluators.*", "oloproof.transforms.*", "*.spec", "oloproof.measures.spec")),
    ("config", ("oloproof.config",)),
    ("engine", ("oloproof.measures.*", "oloproof.run", "oloproof.runstore", "oloproof.lastgate", "oloproof.pairs", "oloproof.decide", "oloproof.judged", "oloproof.checks", "oloproof.result", "oloproof.slices.*", "oloproof.classification", "oloproof.rulemarks", "oloproof.runscores")),
    ("capability", ("oloproof.leakage.*", "oloproof.holdout.*", "oloproof.seeds.*", "oloproof.metamorphic.*", "oloproof.compare.*")),
    ("gate", ("oloproof.gate", "oloproof.devset")),
    ("report", ("oloproof.report.*",)),
    ("interface", ("oloproof.cli.*", "oloproof.action.*", "oloproof.__main__")),
)
CAPABILITIES = ("oloproof.leakage", "oloproof.holdout", "oloproof.seeds", "oloproof.metamorphic", "oloproof.compare")
LAZY = re.compile(r"#\s*lazy:\s*(start-up|optional)\b")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    file: str
    line: int
    in_function: bool
    lazy: bool
    implicit: bool = False  # the enclosing package's __init__, which Python runs first


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    found = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    assert len(found) > 50, f"only {len(found)} modules found under {PACKAGE}: is the test looking in the right place?"
    return found


MODULES = all_modules()


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def parents(name: str) -> list[str]:
    """The packages Python initialises before ``name`` (``oloproof.a.b`` → ``oloproof``, ``oloproof.a``)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def resolve_from(module: str, node: ast.ImportFrom) -> str | None:
    if node.level:
        base = module.split(".") if is_package(module) else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module


def imports_of(name: str, path: Path) -> list[Edge]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, filename=str(path))
    edges: list[Edge] = []
    shown = str(path.relative_to(ROOT))

    def add(target: str, node: ast.stmt, in_function: bool) -> None:
        lazy = bool(LAZY.search(lines[node.lineno - 1])) or bool(LAZY.search(lines[node.end_lineno - 1]))  # type: ignore[index]
        for each in (*parents(target), target):
            if each in MODULES and each != name:
                edges.append(Edge(name, each, shown, node.lineno, in_function, lazy, implicit=each != target))

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, in_function)
                    if in_function and not alias.name.startswith("oloproof"):
                        edges.append(Edge(name, alias.name, shown, child.lineno, True, bool(LAZY.search(lines[child.lineno - 1]))))
            elif isinstance(child, ast.ImportFrom):
                target = resolve_from(name, child)
                if target is None:
                    continue
                if target.startswith("oloproof"):
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        add(sub if sub in MODULES else target, child, in_function)
                elif in_function and target != "__future__":
                    line = lines[child.lineno - 1] + lines[child.end_lineno - 1]  # type: ignore[index]
                    edges.append(Edge(name, target, shown, child.lineno, True, bool(LAZY.search(line))))
            visit(child, inside)

    visit(tree, False)
    return edges


EDGES = [edge for name, path in MODULES.items() for edge in imports_of(name, path)]
INTERNAL = [edge for edge in EDGES if edge.target in MODULES]


def layer_of(name: str) -> int:
    """The index of ``name``'s layer; a capability's ``spec`` module is in the spec layer."""
    best: tuple[int, int] | None = None  # (specificity, layer)
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            if pattern == "*.spec":
                hit = name.endswith(".spec") and any(name.startswith(cap + ".") for cap in CAPABILITIES)
                score = 1000 if hit else -1
            elif pattern.endswith(".*"):
                prefix = pattern[:-2]
                hit = name == prefix or name.startswith(prefix + ".")
                score = len(prefix) if hit else -1
            else:
                hit = name == pattern
                score = 999 if hit else -1
            if hit and (best is None or score > best[0]):
                best = (score, index)
    if best is None:
        raise AssertionError(f"{name} has no layer: add it to LAYERS in tests/test_layers.py and to docs/architecture.md")
    return best[1]


def capability_of(name: str) -> str | None:
    return next((cap for cap in CAPABILITIES if name == cap or name.startswith(cap + ".")), None)


def test_every_module_has_a_layer() -> None:
    for name in MODULES:
        layer_of(name)


def test_imports_point_down_the_layers() -> None:
    wrong = [
        f"{edge.file}:{edge.line}: {edge.source} ({LAYERS[layer_of(edge.source)][0]}) imports {edge.target} "
        f"({LAYERS[layer_of(edge.target)][0]})"
        for edge in INTERNAL
        # A package __init__ imports nothing (tested below), so running it first ties nothing together.
        if not edge.implicit and layer_of(edge.target) > layer_of(edge.source)
    ]
    assert not wrong, "imports against the layer order (docs/architecture.md):\n" + "\n".join(sorted(set(wrong)))


def test_a_capability_never_imports_another() -> None:
    wrong = [
        f"{edge.file}:{edge.line}: {edge.source} imports {edge.target}"
        for edge in INTERNAL
        if not edge.implicit and (a := capability_of(edge.source)) and (b := capability_of(edge.target)) and a != b
    ]
    assert not wrong, "capabilities import each other (only oloproof.gate lists them):\n" + "\n".join(sorted(set(wrong)))


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for edge in INTERNAL:
        graph[edge.source].add(edge.target)
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(sorted(cycle)) for cycle in cycles)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm: the components with more than one module (iterative, no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_package_inits_import_nothing_of_oloproof() -> None:
    wrong = [
        f"{edge.file}:{edge.line}: {edge.source} imports {edge.target}"
        for edge in INTERNAL
        if is_package(edge.source) and edge.target not in parents(edge.source)
    ]
    assert not wrong, "a package __init__ imports its submodules (import them where they are used):\n" + "\n".join(sorted(set(wrong)))


def test_imports_inside_functions_say_why() -> None:
    wrong = [
        f"{edge.file}:{edge.line}: {edge.source} imports {edge.target} inside a function without `# lazy: start-up`"
        for edge in EDGES
        if edge.in_function and not edge.lazy and not edge.implicit
    ]
    assert not wrong, "imports inside functions are for start-up time only, and say so:\n" + "\n".join(sorted(set(wrong)))


def test_no_module_is_over_500_lines() -> None:
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them where the seams are): {long}"


def test_only_the_action_reads_github_variables() -> None:
    wrong: list[str] = []
    for name, path in MODULES.items():
        if name.startswith("oloproof.action"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in ("get", "getenv", "pop", "setdefault"):
                    key = node.args[0].value
            if isinstance(key, str) and key.startswith("GITHUB_"):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name} reads {key}")
    assert not wrong, "only oloproof/action/ reads GITHUB_* (pass what it says as arguments):\n" + "\n".join(wrong)


@pytest.mark.parametrize("pattern", sorted({p for _, patterns in LAYERS for p in patterns if p not in ("*.spec",)}))
def test_every_layer_pattern_names_something_or_is_planned(pattern: str) -> None:
    prefix = pattern[:-2] if pattern.endswith(".*") else pattern
    planned = {"oloproof.compare"}  # SPEC §7: the next capability; listed so its room is decided
    assert prefix in planned or any(name == prefix or name.startswith(prefix + ".") for name in MODULES), (
        f"layer pattern {pattern} matches no module: remove it or fix its spelling"
    )
