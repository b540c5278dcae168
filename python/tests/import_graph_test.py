"""The modules of the modrt package import each other without a circle (every
import counts, at module level or inside a function, except those under
`if TYPE_CHECKING:`), and each one imports on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import modrt
import modrt.backend


def package_files() -> dict[str, Path]:
    """Every module of modrt's namespace (the package and the in-tree hooks), by name."""
    modules: dict[str, Path] = {}
    for portion in modrt.__path__:
        root = Path(portion)
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules.setdefault(".".join(["modrt", *parts]), path)
    return modules


def under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return True
    return False


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modrt modules that `name` imports (resolving relative imports)."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if under_type_checking(node, parents):
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from X import Y`: Y is a module when one is named X.Y, else a name in X.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in modules and t != name}
    return found


def import_graph() -> dict[str, set[str]]:
    modules = package_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle as a path [a, b, ..., a], or [] when there is none.
    The package `modrt` is left out as a target: Python imports it first
    anyway, and it imports its submodules by design. (modrt.backend is not:
    hooks reach it through modrt.sdk, and it imports them by name only.)"""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt == "modrt":
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    # modrt.modules imports modrt.artifact inside Module.export and load_module.
    assert "modrt.artifact" in graph["modrt.modules"]
    assert "modrt._ffi" in graph["modrt.runtime"]
    assert "modrt.backend.cuda.nvrtc" in graph["modrt.backend.cuda"]


def test_hooks_import_the_sdk_and_their_own_modules_only():
    graph = import_graph()
    hooks = [name for name in graph if name.startswith("modrt.backend.")]
    assert hooks
    for hook in hooks:
        own = hook.split(".")[2]
        outside = {m for m in graph[hook] if m != "modrt.sdk" and not m.startswith(f"modrt.backend.{own}")}
        assert not outside, f"{hook} imports {sorted(outside)}: a hook builds on modrt.sdk only"


def test_no_import_circle_in_modrt():
    assert find_cycle(import_graph()) == []


def test_a_circle_is_found():
    # The checker itself, on the circle this package used to have.
    graph = {
        "modrt._ffi": {"modrt.runtime"},
        "modrt.runtime": {"modrt._ffi", "modrt.artifact"},
        "modrt.artifact": {"modrt.runtime"},
    }
    assert find_cycle(graph) == ["modrt._ffi", "modrt.runtime", "modrt._ffi"]


@pytest.mark.parametrize("name", sorted(package_files()))
def test_module_imports_alone_in_a_fresh_interpreter(name):
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


# What only compiling needs: the source checks and the standard modules they
# use. `import modrt` runs every backend hook's registration, and each of these
# would add milliseconds to every user's import (tools/bench's import row).
COMPILE_ONLY_MODULES = (
    "modrt.backend.opencl.source_check",
    "modrt.backend.webgpu.source_check",
    "pathlib",
    "re",
    "subprocess",
)


def test_import_modrt_leaves_what_only_compiling_needs_unimported():
    code = (
        "import sys, modrt\n"
        f"print(' '.join(m for m in {COMPILE_ONLY_MODULES!r} if m in sys.modules))\n"
        "print(' '.join(sorted(modrt.backend.loaded())))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported, hooks = proc.stdout.split("\n")[:2]
    assert hooks, "no backend hook ran: the check would prove nothing"
    assert imported == "", f"import modrt imported {imported} (hooks: {hooks})"
