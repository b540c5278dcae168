"""modrt's native layers, read from the build graph (the genquery outputs beside
this file): the core stands on the ground; the backends' runtimes stand on the
core; the compiler DSO (//packaging) gathers the core and every backend's
fallback; Python, the tests and the tools are above all of them. No target
depends on one in a layer above its own."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent

# Each repository package prefix and its floor, lowest first. third_party/ is
# vendored code that modrt builds and never shapes: the ground, like an
# external repository.
FLOORS: tuple[tuple[str, int], ...] = (
    ("core", 0),
    ("third_party", 0),
    ("backends", 1),
    ("packaging", 2),
    ("python", 3),
    ("examples", 4),
    ("fuzz", 4),
    ("tests", 4),
    ("tools", 4),
)

# Build configuration, not code above the core: the --config=portable switch
# and the glibc shim it links into every DSO (tools/gpu/portable.bzl).
BUILD_CONFIGURATION = frozenset(
    {
        "//tools/gpu:build_portable",
        "//tools/gpu:glibc_compat",
        "//tools/gpu:glibc_compat.c",
        "//tools/gpu:portable",
    }
)


def floor_of(label: str) -> int:
    """The floor of a label of this repository (`//pkg/sub:name`)."""
    package = label[2:].partition(":")[0]
    for prefix, floor in FLOORS:
        if package == prefix or package.startswith(prefix + "/"):
            return floor
    raise ValueError(f"{label}: package {package!r} is on no floor of tests/layering_test.py; add it to FLOORS")


def arrows_up(closure: list[str], floor: int) -> list[str]:
    """The labels of `closure` (one layer's targets and all they depend on)
    that stand above `floor`: each one an arrow pointing back up."""
    return sorted(
        label
        for label in closure
        if label.startswith("//") and label not in BUILD_CONFIGURATION and floor_of(label) > floor
    )


def closure(name: str) -> list[str]:
    labels = (HERE / name).read_text().split()
    assert labels, f"{name} is empty: the genquery found nothing"
    return labels


@pytest.mark.parametrize(
    ("name", "floor", "owner"),
    [
        ("core_closure", 0, "//core"),
        ("runtimes_closure", 1, "//backends/<x>:runtime"),
        ("packaging_closure", 2, "//packaging"),
    ],
)
def test_no_arrow_points_back_up(name: str, floor: int, owner: str) -> None:
    up = arrows_up(closure(name), floor)
    assert up == [], f"{owner} depends on targets above it: {up}"


def test_the_core_stands_on_nothing_of_modrt_but_itself() -> None:
    modrt_packages = {
        label[2:].partition(":")[0]
        for label in closure("core_closure")
        if label.startswith("//") and label not in BUILD_CONFIGURATION
    }
    assert modrt_packages == {"core"}


def test_the_compiler_dso_gathers_every_backend_fallback() -> None:
    labels = set(closure("packaging_closure"))
    assert "//core:compiler_objects" in labels
    for backend in ("cuda", "rocm", "metal", "vulkan", "opencl", "hexagon", "webgpu"):
        assert f"//backends/{backend}:fallback" in labels


def test_a_backend_sees_the_headers_of_its_audiences_and_not_the_cores_own() -> None:
    """docs/C_ABI.md, "Headers by audience": a backend builds against the C
    ABI, the plugin kit, the codegen kit or the embedder's C API; the core's
    own headers (//core:internal, :runtime_internal) and objects are not
    visible to it, so a backend that names one does not build."""
    assert set(closure("core_visible_to_backends")) == {
        "//core:abi",
        "//core:compiler_objects",
        "//core:libmodrt_runtime.so",
        "//core:plugin_api",
        "//core:runtime_api",
    }


def test_an_arrow_up_is_caught() -> None:
    """The check itself: the edge this layering removed (the core linking
    every backend's fallback) and a test hook in core are both reported;
    build configuration and external repositories are not."""
    core_as_it_was = [
        "//core:libmodrt_runtime.so",
        "//backends:fallbacks",
        "//python:sdk",
        "//tools/gpu:glibc_compat",
        "@bazel_tools//tools/cpp:toolchain",
    ]
    assert arrows_up(core_as_it_was, 0) == ["//backends:fallbacks", "//python:sdk"]
    assert arrows_up(["//tests/hooks:hooks"], 3) == ["//tests/hooks:hooks"]
    with pytest.raises(ValueError, match="on no floor"):
        floor_of("//somewhere_new:target")
