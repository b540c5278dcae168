"""Adding a backend is its folder and one line (docs/BACKEND_GUIDE.md, "To add
a backend"): a throwaway backend, `toy`, is added to a scratch copy of this
checkout exactly that way (backends/toy/ and `"toy"` in BACKENDS of
backends/defs.bzl; every other file is the checkout's own, .bazelrc included),
and a nested Bazel shows that everything that lists backends took it up: the
wheel set, the `--config=cpu-runtimes` group its record joins, the Python
selection and identities, the shared suites' kernels (the fallback contract
runs a case for it) and its Python record (language, demo kernel)."""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest
from nested_bazel import NestedBazel, mirror_checkout, scratch_dir

DEFS = Path("backends/defs.bzl")  # in runfiles, relative to the test's cwd
GUIDE = Path("docs/BACKEND_GUIDE.md")

TOY_BUILD = """\
load("//backends:defs.bzl", "modrt_backend")

modrt_backend(
    name = "toy",
    cpu_runtime = True,
    device_type = "kDLExtDev",
    display_name = "Toy",
    formats = ["toy"],
    hook_srcs = glob(["python/modrt/backend/toy/*.py"]),
    payload_shape = "single-binary",
)

# No runtime, so no wheel: an empty one stands in the wheel set.
filegroup(
    name = "wheel",
    srcs = [],
    visibility = ["//visibility:public"],
)
"""

TOY_HOOK = '''\
"""The throwaway backend of //backends:add_a_backend_test: its code is its source."""

from modrt import sdk

DEMO_SOURCE = "vadd: c = a + b"
DEMO_SIGNATURE = "vadd(float32*, float32*, float32*, int32)"


def codegen(source, functions, target):
    text = sdk.text_of(source)
    return sdk.Payload.create("single-binary", "toy", functions, code=text.encode(), sources={"toy": text})


BACKEND = sdk.Backend("toy", codegen=codegen, language="Toy C", demo=(DEMO_SOURCE, DEMO_SIGNATURE))


def register_backend():
    sdk.register_in_tree(BACKEND)
'''

TOY_KERNELS = '''\
"""The throwaway backend's kernels for the shared suites."""

FALLBACK = ("scale: x *= a", "toy", "scale: x *= a")
'''

RECORD_CHECK = """\
import modrt
record = modrt.backend.record("toy")
print("record", record.language, record.demo[1], "toy" in modrt.backend.in_tree())
"""


def checkout_root() -> Path:
    """The modrt checkout this test was built from (runfiles link into it)."""
    return Path(os.path.realpath(DEFS)).parents[1]


def add_one_line(defs: str) -> str:
    """defs.bzl with "toy" added to BACKENDS, on that line."""
    lines = defs.splitlines(keepends=True)
    (index,) = [i for i, line in enumerate(lines) if line.startswith("BACKENDS = [")]
    lines[index] = lines[index].replace("]", ', "toy"]')
    return "".join(lines)


@pytest.fixture(scope="module")
def tree() -> Path:
    scratch = scratch_dir("add-a-backend-")
    root = checkout_root()
    tree = scratch / "tree"
    mirror_checkout(root, tree, own="backends")
    (tree / "backends").mkdir()
    for entry in (root / "backends").iterdir():
        if entry.name != "defs.bzl":
            os.symlink(entry, tree / "backends" / entry.name)
    # The one line.
    (tree / DEFS).write_text(add_one_line((root / DEFS).read_text()))
    # The folder.
    toy = tree / "backends" / "toy"
    (toy / "python" / "modrt" / "backend" / "toy").mkdir(parents=True)
    (toy / "testing").mkdir()
    (toy / "BUILD.bazel").write_text(TOY_BUILD)
    (toy / "python" / "modrt" / "backend" / "toy" / "__init__.py").write_text(TOY_HOOK)
    (toy / "testing" / "toy_kernels.py").write_text(TOY_KERNELS)
    yield tree
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="module")
def bazel(tree: Path) -> NestedBazel:
    nested = NestedBazel(tree, tree.parent)
    yield nested
    nested.shutdown()


def test_the_change_is_the_folder_and_one_line(tree: Path):
    root = checkout_root()
    changed = [
        line
        for line in difflib.unified_diff((root / DEFS).read_text().splitlines(), (tree / DEFS).read_text().splitlines())
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert len(changed) == 2 and '"toy"' in changed[1], changed
    outside = [
        str(path.relative_to(tree))
        for path in tree.rglob("*")
        if not path.is_symlink() and path.is_file() and not path.is_relative_to(tree / "backends" / "toy")
    ]
    assert outside == [str(DEFS)]
    # What the guide tells a backend author to do is what this test did.
    guide = GUIDE.read_text()
    assert "add `x` to `BACKENDS` in `backends/defs.bzl`: that one line and the folder" in guide


def test_every_list_of_backends_takes_it_up(bazel: NestedBazel):
    assert "//backends/toy:wheel" in bazel.check("query", "deps(//python:wheels, 1)").split()
    assert "//backends/toy:testing" in bazel.check("query", "deps(//tests:support, 1)").split()
    assert "//backends/toy:hook" in bazel.check("query", "deps(//python:modrt, 1)").split()
    # .bazelrc names no backend: its record puts it in the cpu group.
    bazel.check("build", "--config=cpu-runtimes", "//python:selection")
    selection = (bazel.workspace / "bazel-bin" / "python" / "modrt" / "_selection.py").read_text()
    namespace: dict = {}
    exec(selection, namespace)
    assert "toy" in namespace["FLAGS_ON"] and "opencl" in namespace["FLAGS_ON"]
    assert "cuda" not in namespace["FLAGS_ON"]
    assert namespace["IDENTITIES"]["toy"]["display_name"] == "Toy"
    assert "toy" in namespace["RUNTIMES"]


def test_its_record_and_the_shared_suites_take_it_up(bazel: NestedBazel):
    out = bazel.check("run", "--config=all-runtimes", "//tools:python", "--", "-c", RECORD_CHECK)
    assert "record Toy C vadd(float32*, float32*, float32*, int32) True" in out
    out = bazel.check(
        "test", "--config=all-runtimes", "//tests:fallback_contract_test", "--test_output=all", "--test_arg=-vv"
    )
    assert "test_fallback_kind_bytes_and_refusal[toy] PASSED" in out, out[-6000:]
