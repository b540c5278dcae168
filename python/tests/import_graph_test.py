"""The modules of the modrt package, and of modrt_tinygrad, import each other
without a circle (every import counts, at module level, inside a function or
under `if TYPE_CHECKING:`: an import made for annotations only is still an
arrow between two modules, as a drawing of the import graph shows it), and
each modrt module imports on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import modrt
import modrt.backend

# modrt_tinygrad's sources (//python/modrt_tinygrad:files, data of this test):
# read, never imported (that needs tinygrad). Its overlay is tinygrad's module.
TINYGRAD_PACKAGE = Path(__file__).parent.parent / "modrt_tinygrad"


def package_files(package: str = "modrt", portions: list[str] | None = None) -> dict[str, Path]:
    """Every module of `package`'s namespace (for modrt: the package and the
    in-tree hooks), by name."""
    modules: dict[str, Path] = {}
    for portion in modrt.__path__ if portions is None else portions:
        root = Path(portion)
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[0] == "overlay":
                continue
            if parts[-1] == "__init__":
                parts.pop()
            modules.setdefault(".".join([package, *parts]), path)
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modrt modules that `name` imports (resolving relative imports)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
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


def import_graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    modules = package_files() if modules is None else modules
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def tinygrad_graph() -> dict[str, set[str]]:
    return import_graph(package_files("modrt_tinygrad", [str(TINYGRAD_PACKAGE)]))


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
            if nxt in ("modrt", "modrt_tinygrad"):
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


def assert_stands_in_order(graph: dict[str, set[str]], order: list[str]) -> None:
    """Each module of `order` imports none of those after it: no arrow back up."""
    for i, name in enumerate(order):
        above = graph[name] & set(order[i + 1 :])
        assert not above, f"{name} imports {sorted(above)}, which stand on it"


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    # modrt.modules imports modrt.artifact inside Module.export and load_module.
    assert "modrt.artifact" in graph["modrt.modules"]
    assert "modrt._ffi" in graph["modrt.devices"]
    assert "modrt.backend.cuda.nvrtc" in graph["modrt.backend.cuda"]
    # Imports for annotations only count too.
    assert "modrt.devices" in graph["modrt.pinned"]


def test_the_device_layer_stands_device_streams_tensors_graphs():
    # Each concept imports only those below it: no arrow back up.
    graph = import_graph()
    assert_stands_in_order(graph, ["modrt.devices", "modrt.streams", "modrt.tensors", "modrt.graphs"])
    assert "modrt.devices" in graph["modrt.streams"]
    assert {"modrt.devices", "modrt.streams"} <= graph["modrt.tensors"]
    assert {"modrt.streams", "modrt.tensors"} <= graph["modrt.graphs"]
    # modrt.runtime only gathers the names it always had: nothing inside imports it.
    assert not [name for name, imports in graph.items() if "modrt.runtime" in imports and name != "modrt"]


def test_modrt_distributed_stands_errors_cluster_group_handles_session():
    # A Session is a WorkerGroup handing out handles; the handles see their
    # session through a Protocol, so nothing below imports what stands on it.
    graph = import_graph()
    order = [
        "modrt.distributed._errors",
        "modrt.distributed._cluster",
        "modrt.distributed._worker",
        "modrt.distributed._group",
        "modrt.distributed._handles",
        "modrt.distributed._session",
    ]
    assert_stands_in_order(graph, order)
    assert {"modrt.distributed._group", "modrt.distributed._handles"} <= graph["modrt.distributed._session"]


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


def test_no_import_circle_in_modrt_tinygrad():
    graph = tinygrad_graph()
    assert "modrt_tinygrad.device" in graph, f"modrt_tinygrad's sources are not at {TINYGRAD_PACKAGE}"
    assert "modrt_tinygrad.graph" in graph["modrt_tinygrad.device"]
    assert find_cycle(graph) == []


def test_modrt_tinygrad_stands_by_tinygrads_roles():
    # memory and compiler below program, program below graph, all below device.
    graph = tinygrad_graph()
    order = [
        "modrt_tinygrad.memory",
        "modrt_tinygrad.compiler",
        "modrt_tinygrad.program",
        "modrt_tinygrad.graph",
        "modrt_tinygrad.device",
    ]
    assert_stands_in_order(graph, order)


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
