"""The shape of the code: one-way imports, torch only in execution, small modules and functions,
and each card kind's name written in few places (a kind lives in its own module); the tests' own shape:
folders that mirror src/quizgen, and no test module importing another but tests/support/."""

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


# -- the tests' own shape ----------------------------------------------------------------------------

TESTS = Path(__file__).parent
# Test folders that mirror no folder of src/quizgen, each with its reason.
EXTRA_TEST_FOLDERS = {
    "support": "helpers shared by test files (the only test modules a test may import)",
    "cases": "data files read by the Python and the JavaScript tests alike",
    "js": "the node tests of the quiz's JavaScript",
    "e2e": "the whole program as a user meets it",
    "safety": "a stranger's repository against the build (docs/safety.md)",
}


def imported_test_modules(path: Path, top: Path) -> set[str]:
    """The test-tree modules (`tests.…`) that `path`, under top/tests, imports (relative ones resolved)."""
    package = list(path.relative_to(top).parent.parts)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "tests")
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.split(".")[0] != "tests":
                continue
            folder = top.joinpath(*target.split("."))
            for alias in node.names:  # `from tests.support import quiz` imports the module tests.support.quiz
                is_module = (folder / alias.name).is_dir() or (folder / f"{alias.name}.py").is_file()
                found.add(f"{target}.{alias.name}" if is_module else target)
    return found


def foreign_test_imports(tests: Path) -> dict[str, list[str]]:
    """File under `tests` -> the test modules it imports besides tests.support (conftest.py counts)."""
    found = {}
    for path in sorted(tests.rglob("*.py")):
        modules = imported_test_modules(path, tests.parent)
        bad = sorted(m for m in modules if m != "tests.support" and not m.startswith("tests.support."))
        if bad:
            found[str(path.relative_to(tests))] = bad
    return found


def test_no_test_module_imports_another_but_support() -> None:
    """Shared helpers live in tests/support/; fixtures come from conftest.py by name, never by import."""
    assert foreign_test_imports(TESTS) == {}


def test_foreign_test_imports_are_seen(tmp_path: Path) -> None:
    """The check above sees relative and absolute imports of a test file or of conftest, inside functions
    too, and lets tests.support be."""
    tests = tmp_path / "tests"
    for folder in ("cards", "render", "support"):
        (tests / folder).mkdir(parents=True)
    (tests / "support" / "quiz.py").write_text("")
    (tests / "render" / "test_x.py").write_text("")
    (tests / "cards" / "test_a.py").write_text(
        "from tests.support.quiz import open_tab\nfrom tests.support import quiz\n"
        "from ..conftest import write_project\nfrom tests.render import test_x\n"
        "def f():\n    from .test_b import helper\n"
    )
    assert foreign_test_imports(tests) == {
        "cards/test_a.py": ["tests.cards.test_b", "tests.conftest", "tests.render.test_x"]
    }


def test_every_test_folder_mirrors_a_source_folder() -> None:
    """tests/<path>/ tests src/quizgen/<path>/ (or the module <path>.py), or is one of the extra folders."""
    folders = [
        p.relative_to(TESTS)
        for p in sorted(TESTS.rglob("*"))
        if p.is_dir() and not {"__pycache__", "node_modules"} & set(p.parts) and not p.name.startswith(".")
    ]
    strays = [
        str(f)
        for f in folders
        if f.parts[0] not in EXTRA_TEST_FOLDERS
        and not (SRC / f).is_dir()
        and not (SRC / f).with_suffix(".py").is_file()
    ]
    assert strays == []
    python = [f for f in folders if f.parts[0] not in ("cases", "js")]
    assert [
        str(f) for f in python if not (TESTS / f / "__init__.py").is_file()
    ] == []  # same basenames may recur


def test_test_files_are_tests_or_support() -> None:
    """Outside support/, a Python file under tests/ is a test module, a conftest.py or an __init__.py."""
    loose = [
        str(p.relative_to(TESTS))
        for p in sorted(TESTS.rglob("*.py"))
        if p.relative_to(TESTS).parts[0] != "support"
        and not (p.name.startswith("test_") or p.name in ("conftest.py", "__init__.py"))
        and "node_modules" not in p.parts
    ]
    assert loose == []


def test_no_file_keeps_a_merge_conflict() -> None:
    """A merge's conflict markers once reached a commit of cards/COVERAGE.md, where no test read them."""
    root = SRC.parent.parent
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
    kept = [
        str(p.relative_to(root))
        for folder in ("cards", "docs", "src", "templates", "tests", "bench")
        for p in sorted((root / folder).rglob("*"))
        if p.suffix in (".md", ".yaml", ".py", ".html", ".js", ".css", ".toml", ".lock")
        and "node_modules" not in p.parts
        and p.is_file()
        and marker.search(p.read_text(errors="replace"))
    ]
    kept += [f for f in ("README.md", "pyproject.toml") if marker.search((root / f).read_text())]
    assert kept == []
