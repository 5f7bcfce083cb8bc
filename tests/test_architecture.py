"""The shape of the code: one-way imports, torch only in execution, small modules and functions,
and each card kind's name written in few places (a kind lives in its own module)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import quizgen

SRC = Path(quizgen.__file__).parent
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


@cache
def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, path: Path, top_level_only: bool) -> set[str]:
    """The modules `module` imports: at import time only, or anywhere (lazy imports too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.If) and top_level_only:  # `if TYPE_CHECKING:` imports do not run
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, path.name == "__init__.py")
            submodules = {f"{target}.{alias.name}" for alias in node.names} & set(modules())
            names |= submodules
            if len(submodules) < len(node.names):  # names defined by the package itself
                names.add(target)
    return names


def import_graph(top_level_only: bool = True) -> dict[str, set[str]]:
    """Module -> the package's modules it imports: at import time only, or anywhere (inside functions too)."""
    mods = modules()
    return {
        name: {m for m in imports(name, path, top_level_only) if m in mods and m != name}
        for name, path in mods.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, each as the path that closes it (Tarjan-free DFS, small graphs)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_no_import_cycles() -> None:
    """Counting imports inside functions too: a lazy import that closes a cycle only hides it."""
    assert cycles(import_graph(top_level_only=False)) == []


def test_cycles_are_seen_through_imports_inside_functions(tmp_path: Path) -> None:
    """The check above sees a cycle closed by an import inside a function (the import-time graph does not)."""
    (tmp_path / "low.py").write_text("def f():\n    import pkg.high\n")
    (tmp_path / "high.py").write_text("import pkg.low\n")
    found = {}
    for top_level_only in (True, False):  # the import-time graph, then every import
        graph = {
            f"pkg.{n}": imports(f"pkg.{n}", tmp_path / f"{n}.py", top_level_only) for n in ("low", "high")
        }
        found[top_level_only] = cycles(graph)
    assert found == {True: [], False: [["pkg.high", "pkg.low", "pkg.high"]]}


def test_only_the_worker_imports_torch() -> None:
    importers = {
        name
        for name, path in modules().items()
        if any(m.split(".")[0] == "torch" for m in imports(name, path, False))
    }
    assert importers, "the worker must import torch somewhere"
    assert {m for m in importers if not m.startswith("quizgen.execution.worker.")} == set()


def test_cli_and_loading_never_import_torch_at_import_time() -> None:
    graph = import_graph()
    reachable: set[str] = set()
    todo = ["quizgen.cli", "quizgen.cards.loader", "quizgen.pipeline"]
    while todo:
        name = todo.pop()
        if name not in reachable:
            reachable.add(name)
            todo.extend(graph[name])
    mods = modules()
    assert not any(
        "torch" in {m.split(".")[0] for m in imports(name, mods[name], True)} for name in reachable
    )


def test_modules_and_functions_stay_small() -> None:
    longest_module = max((len(p.read_text().splitlines()), n) for n, p in modules().items())
    assert longest_module[0] <= MAX_MODULE_LINES, longest_module
    functions = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                functions.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    assert max(functions)[0] <= MAX_FUNCTION_LINES, max(functions)


def test_each_kind_is_named_in_at_most_three_source_files() -> None:
    from quizgen import kinds

    sources = [p for p in SRC.rglob("*") if p.suffix in (".py", ".js")]
    for kind in kinds.names():
        if kind == "value":  # also the name of a field of every answer ("value": ...), not only a kind
            continue
        literal = re.compile(rf"""(['"]){kind}\1""")
        files = sorted(
            str(p.relative_to(SRC)) for p in sources if literal.search(p.read_text(encoding="utf-8"))
        )
        assert len(files) <= 3, (kind, files)


def test_a_kinds_files_lie_in_its_folder() -> None:
    """A kind's module, templates and scripts are in kinds/<kind>/: no file elsewhere is named after it."""
    from quizgen import kinds

    for kind in kinds.names():
        named = re.compile(rf"(^|[._-]){kind}([._-]|$)")
        outside = sorted(
            str(p.relative_to(SRC))
            for p in SRC.rglob("*")
            if p.is_file()
            and "__pycache__" not in p.parts
            and named.search(p.stem)
            and p.parent != SRC / "kinds" / kind
            and SRC / "kinds" / kind not in p.parents
        )
        assert outside == [], (kind, outside)
        assert (SRC / "kinds" / kind / "quiz.html").is_file()
        assert {p.name for p in (SRC / "kinds" / kind).glob("anki.*.html")} == {
            "anki.front.html",
            "anki.back.html",
        }
