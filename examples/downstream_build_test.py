"""Builds examples/downstream, a Bazel module of its own that depends on modrt
target by target, with a nested `bazel test` the way its users run it, and
checks what it may and may not see of modrt.

The module is copied into a scratch tree laid out like this checkout (its
`local_path_override` paths stay as written); Bazel runs offline like the
main build, with the machine's shared disk cache when one is configured.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from nested_bazel import NestedBazel, mirror_checkout, scratch_dir

DOWNSTREAM = Path("examples/downstream")  # in runfiles, relative to the test's cwd
DOCS = Path("docs/BAZEL.md")


def checkout_root() -> Path:
    """The modrt checkout this test was built from (runfiles link into it)."""
    return Path(os.path.realpath(DOWNSTREAM / "MODULE.bazel")).parents[2]


@pytest.fixture(scope="module")
def downstream() -> NestedBazel:
    scratch = scratch_dir("downstream-")
    tree = scratch / "tree"
    mirror_checkout(checkout_root(), tree, own="examples")
    workspace = tree / DOWNSTREAM
    shutil.copytree(DOWNSTREAM, workspace, symlinks=False)
    bazel = NestedBazel(workspace, scratch)
    yield bazel
    bazel.shutdown()
    shutil.rmtree(scratch)


@contextlib.contextmanager
def probe_package(bazel: NestedBazel, name: str, build: str) -> Iterator[None]:
    """A package in the downstream module for as long as one check needs it."""
    package = bazel.workspace / name
    package.mkdir()
    (package / "BUILD.bazel").write_text(build)
    try:
        yield
    finally:
        shutil.rmtree(package)


def log(proc: subprocess.CompletedProcess) -> str:
    """The nested output, indented so it never reads as the outer Bazel's own."""
    return "\n".join("    | " + line for line in proc.stdout.splitlines()[-80:])


def test_downstream_module_builds_and_its_tests_pass(downstream):
    proc = downstream("test", "//...", "--nocache_test_results", "--symlink_prefix=/")
    assert proc.returncode == 0, log(proc)
    for test in ("//:downstream_test", "//:cuda_cross_compile_test"):
        assert re.search(rf"^{re.escape(test)}\s+PASSED", proc.stdout, re.M), log(proc)


def test_internal_targets_are_not_visible_downstream(downstream):
    internal = [
        "@modrt//core:runtime_objects",
        "@modrt//core:internal",
        "@modrt//core:compiler_objects",
        "@modrt//backends:opencl_on",
        "@modrt//tests:support",
    ]
    build = "".join(f'filegroup(name = "uses_{i}", srcs = ["{label}"])\n' for i, label in enumerate(internal))
    with probe_package(downstream, "visibility_probe", build):
        proc = downstream("build", "--keep_going", "--nobuild", "//visibility_probe:all")
    assert proc.returncode != 0, log(proc)
    for label in internal:
        name = re.escape(label.split("//", 1)[1])
        # An alias (backends:<x>_on) is refused naming itself and what it refers to.
        assert re.search(
            rf"(target|alias) '@@?modrt~?//{name}' (referring to .* )?is not visible from target", proc.stdout
        ), log(proc)


def test_modrt_macros_do_not_load_downstream(downstream):
    with probe_package(downstream, "load_probe", 'load("@modrt//backends:defs.bzl", "modrt_backend")\n'):
        proc = downstream("build", "--nobuild", "//load_probe:all")
    assert proc.returncode != 0, log(proc)
    assert re.search(r"Starlark file @@?modrt~?//backends:defs\.bzl is not visible for loading", proc.stdout), log(proc)


def test_public_targets_are_exactly_those_documented(downstream):
    proc = downstream("query", "visible(//:downstream_test, kind(rule, @modrt//...))", "--output=label")
    assert proc.returncode == 0, log(proc)
    # Labels print as @modrt//... or, canonically, @@modrt~//...
    public = {
        re.sub(r"^@@?modrt~?//", "@modrt//", line)
        for line in proc.stdout.splitlines()
        if re.fullmatch(r"@@?modrt~?//\S+", line)
    }
    documented = documented_public_targets()
    assert documented, f"no public-target table found in {DOCS}"
    undocumented = sorted(t for t in public if not any(re.fullmatch(p, t) for p in documented.values()))
    assert not undocumented, f"public but not listed in {DOCS}: {undocumented}"
    stale = sorted(text for text, p in documented.items() if not any(re.fullmatch(p, t) for t in public))
    assert not stale, f"listed in {DOCS} but not public: {stale}"


def documented_public_targets() -> dict[str, str]:
    """Labels in the first column of the table under "## Public targets", each
    as a regex (`<x>` stands for any backend)."""
    section = re.search(r"^## Public targets\n(.*?)(?=^## )", DOCS.read_text(), re.M | re.S)
    patterns = {}
    for line in (section.group(1) if section else "").splitlines():
        cells = line.split("|")
        if len(cells) > 2:
            for label in re.findall(r"`(@modrt//[^`]+)`", cells[1]):
                patterns[label] = re.escape(label).replace(re.escape("<x>"), "[a-z0-9]+")
    return patterns
