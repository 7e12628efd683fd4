"""The package's modules import one another top-down: their import graph has no cycle.

Every import counts, wherever it is written: at module level, inside a function (a lazy import
that would hide a cycle), under `if TYPE_CHECKING:`. Relative (`from . import _x`,
`from ._x import y`) and absolute (`import ember._x`, `from ember._x import y`) forms both.
"""
import ast
from pathlib import Path

import pytest

import ember

PACKAGE = "ember"
SOURCE = Path(__file__).resolve().parent.parent / "src" / PACKAGE


def package_dir() -> Path:
    """The sources in this tree; the installed package when the tests run without them."""
    return SOURCE if (SOURCE / "__init__.py").is_file() else Path(ember.__file__).resolve().parent


def modules(root: Path) -> set:
    """The package's module names: `__init__` and each .py (or .pyi, for the C extension) file."""
    return {p.stem for p in root.iterdir() if p.suffix in (".py", ".pyi")}


def imports_of(tree: ast.AST, names: set) -> set:
    """The package's modules that `tree` imports (`__init__` for a name taken from the package)."""
    found = set()

    def add(dotted: str) -> None:
        # `ember._x.y` -> `_x`; `ember` alone -> `__init__`
        parts = dotted.split(".")
        if parts[0] != PACKAGE:
            return
        found.add(parts[1] if len(parts) > 1 and parts[1] in names else "__init__")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            elif node.level == 1:
                base = PACKAGE + ("." + node.module if node.module else "")
            else:
                continue  # above the package
            if base == PACKAGE:
                # `from . import a, b`: each name is a module or something __init__ defines
                for alias in node.names:
                    found.add(alias.name if alias.name in names else "__init__")
            else:
                add(base)
    return found


def import_graph(root: Path) -> dict:
    names = modules(root)
    graph = {}
    for name in sorted(names):
        path = root / (name + ".py")
        if not path.is_file():
            graph[name] = set()  # the C extension (its stub imports nothing of the package)
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = imports_of(tree, names) - {name}
    return graph


def find_cycle(graph: dict):
    """A cycle as a list of modules [a, b, ..., a], or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n: WHITE for n in graph}
    stack = []

    def visit(n):
        colour[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour.get(m, BLACK) == GREY:
                return stack[stack.index(m):] + [m]
            if colour.get(m) == WHITE:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        colour[n] = BLACK
        return None

    for n in sorted(graph):
        if colour[n] == WHITE:
            found = visit(n)
            if found:
                return found
    return None


def test_the_package_imports_form_a_dag():
    graph = import_graph(package_dir())
    # the graph was read: __init__ imports the modules, which import one another
    assert {"_client", "_query", "_async", "_documents"} <= graph["__init__"]
    assert "_query" in graph["_references"] and "_documents" in graph["_query"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_nothing_imports_the_package_itself():
    graph = import_graph(package_dir())
    importers = sorted(n for n, deps in graph.items() if "__init__" in deps)
    assert importers == [], f"{importers} import from `ember` (its __init__ imports every module)"


@pytest.mark.parametrize("source, cycle", [
    # a function-level (lazy) import closes a cycle as well as a module-level one
    ({"_a": "from ._b import x\n", "_b": "def f():\n    from . import _a\n"}, True),
    ({"_a": "import ember._b\n", "_b": "from ember._a import y\n"}, True),
    ({"_a": "from ._b import x\n", "_b": "import json\nfrom ._c import z\n", "_c": ""}, False),
], ids=["lazy-import", "absolute-import", "acyclic"])
def test_the_checker_sees_cycles(tmp_path, source, cycle):
    (tmp_path / "__init__.py").write_text("")
    for name, text in source.items():
        (tmp_path / (name + ".py")).write_text(text)
    assert (find_cycle(import_graph(tmp_path)) is not None) == cycle
