"""The import graph of the project's own packages: no circles, planes that only look down, small folders.

Every import statement counts, wherever it stands (module level, inside a function, under
`TYPE_CHECKING`): each is a dependency a reader has to follow. Relative imports are resolved, and
`from pkg import name` is an import of the module `pkg.name` when there is one, else of `pkg`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "training", "indexes", "encoders", "evaluation", "pairank")
TOOLS = ("benchmarks", "scripts")  # scripts that may import any package; no package may import them
# Who may never import whom: the service and training meet only through the saved model folder and the
# shared leaves (docs/reference/layout.md), and the leaves serve both without knowing either.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "app": ("training", *TOOLS),
    "training": ("app", *TOOLS),
    "indexes": ("app", "training", *TOOLS),
    "encoders": ("app", "training", *TOOLS),
    "evaluation": ("app", "training", *TOOLS),
}
# The planes of app/, bottom first (docs/reference/layout.md): a module may import its own plane and
# those below.
PLANES: tuple[tuple[str, ...], ...] = (
    ("app.config", "app.core", "app.observability"),
    ("app.db", "app.schemas"),
    ("app.stores",),
    ("app.serving",),
    ("app.search",),
    ("app.control",),
    ("app.usecases",),
    ("app.api",),
    ("app", "app.process"),
    ("app.main", "app.cli", "app.worker_cli", "app.keys_cli", "app.import_cli", "app.models_cli"),
)
# Outside app, only the Python client may import app, and only its contract: the request and response
# models it sends and reads (which import nothing heavier than pydantic: tests/client/test_client_imports.py).
CONTRACT_READERS = ("pairank.client",)
CONTRACT = "app.schemas"
WEB_FRAMEWORKS = ("fastapi", "starlette")
MAX_MODULES_PER_FOLDER = 15


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the packages and tools (a package is its
    __init__)."""
    modules: dict[str, Path] = {}
    for package in (*PACKAGES, *TOOLS):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every name an import statement of the module asks for, made absolute."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            prefix = node.module or ""
            if node.level:
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = package[: len(package) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{prefix}.{alias.name}"
                yield submodule if submodule in known else prefix


def owning_module(name: str, known: dict[str, Path]) -> str | None:
    """The project module an imported name lives in (its longest known prefix), or None."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a package's own parents left out)."""
    known = module_files()
    graph: dict[str, set[str]] = {module: set() for module in known}
    for module, path in known.items():
        for name in imported_names(module, path, known):
            target = owning_module(name, known)
            if target is not None and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def plane_of(module: str) -> int | None:
    """The plane (0: ground) of an app module, by its longest listed prefix; None outside app."""
    matches = [
        (len(prefix), plane)
        for plane, prefixes in enumerate(PLANES)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    return max(matches)[1] if matches else None


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The import graph, read once."""
    return import_graph()


def test_no_import_circles(graph: dict[str, set[str]]) -> None:
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in found)


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_every_app_module_has_a_plane(graph: dict[str, set[str]]) -> None:
    unplaced = [module for module in graph if module.startswith("app") and plane_of(module) is None]
    assert not unplaced, f"modules of no plane (add them to PLANES and docs/reference/layout.md): {unplaced}"


def test_planes_only_import_downwards(graph: dict[str, set[str]]) -> None:
    upward = []
    for module, targets in graph.items():
        plane = plane_of(module)
        for target in targets:
            target_plane = plane_of(target)
            if target_plane is None:
                continue
            if plane is None:
                if _within(module, TOOLS):
                    continue  # benchmarks and scripts drive the service as its users do
                if not (_within(module, CONTRACT_READERS) and _within(target, (CONTRACT,))):
                    upward.append(f"{module} -> {target} (outside app, only the client may: {CONTRACT})")
            elif target_plane > plane:
                upward.append(f"{module} -> {target}")
    assert not upward, "imports of a higher plane:\n" + "\n".join(sorted(upward))


def test_the_client_reads_the_contract_and_the_service_never_imports_the_client(
    graph: dict[str, set[str]],
) -> None:
    reads = {t for m, targets in graph.items() if _within(m, CONTRACT_READERS) for t in targets}
    assert {t for t in reads if t.startswith("app")} >= {f"{CONTRACT}.ranking", f"{CONTRACT}.errors"}
    # The command line that uploads imports is the one part of the service built on the client.
    users = {m for m, targets in graph.items() if any(_within(t, CONTRACT_READERS) for t in targets)}
    assert {m for m in users if not _within(m, CONTRACT_READERS)} == {"app.import_cli"}


def test_only_the_api_and_the_composition_root_know_the_web_framework() -> None:
    known = module_files()
    offenders = []
    for module, path in known.items():
        plane = plane_of(module)
        if plane is None or module.startswith(("app.api", "app.main")):
            continue
        names = imported_names(module, path, known)
        offenders += [f"{module} -> {n}" for n in names if n.split(".")[0] in WEB_FRAMEWORKS]
    assert not offenders, offenders


def test_the_service_training_and_the_leaves_import_only_what_they_may(graph: dict[str, set[str]]) -> None:
    found = [
        f"{module} -> {target}"
        for module, targets in graph.items()
        for package, banned in FORBIDDEN.items()
        if _within(module, (package,))
        for target in targets
        if _within(target, banned)
    ]
    assert not found, "imports across a boundary:\n" + "\n".join(sorted(found))


def test_the_boundary_check_sees_an_import_from_app_into_training(tmp_path: Path) -> None:
    # It failed to before: every import from app to a package outside app was skipped.
    module = tmp_path / "app" / "probe.py"
    module.parent.mkdir()
    module.write_text("from training.trainer import train\nimport benchmarks.bench_common\n")
    known = {**module_files(), "app.probe": module}
    names = set(imported_names("app.probe", module, known))
    targets = {owning_module(name, known) for name in names}
    assert {"training.trainer", "benchmarks.bench_common"} <= targets


def test_the_worker_process_never_imports_the_web_application(graph: dict[str, set[str]]) -> None:
    reached, frontier = set(), ["app.worker_cli", "app.process"]
    while frontier:
        module = frontier.pop()
        if module not in reached:
            reached.add(module)
            frontier += sorted(graph.get(module, ()))
    assert not {m for m in reached if m == "app.main" or _within(m, ("app.api",))}


def test_no_folder_of_app_training_or_benchmarks_holds_more_than_fifteen_modules() -> None:
    roots = [ROOT / "app", ROOT / "training", ROOT / "benchmarks"]
    folders = [
        *roots,
        *(p for root in roots for p in root.rglob("*") if p.is_dir() and "__pycache__" not in p.parts),
    ]
    crowded = {
        str(folder.relative_to(ROOT)): count
        for folder in folders
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    }
    assert not crowded, crowded
