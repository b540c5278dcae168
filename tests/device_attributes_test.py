"""Device attributes (plugin ABI 1.1): the well-known ones, an enum with one
name and one type each, answered by every backend with a device here and by
a plugin built against the frozen ABI 1.0 headers (by name); a backend's own
attributes stay reachable by name."""

from pathlib import Path

import pytest

import modrt
import modrt._ffi
import modrt_testing

INT_ATTRIBUTES = [
    "multi_processor_count",
    "max_threads_per_block",
    "max_shared_memory_per_block",
    "warp_size",
    "global_memory",
    "max_alloc_size",
    "max_block_dim_x",
    "max_block_dim_y",
    "max_block_dim_z",
    "max_grid_dim_x",
    "max_grid_dim_y",
    "max_grid_dim_z",
]
STRING_ATTRIBUTES = ["name", "vendor", "compute_version"]

# What each backend reports here at least (lavapipe, PoCL, wgpu-native on lavapipe).
ROOT = Path(modrt._ffi.package_root())

REPORTED = {
    "cpu": {"name", "global_memory", "multi_processor_count"},
    "opencl": {
        "name",
        "vendor",
        "max_threads_per_block",
        "max_shared_memory_per_block",
        "warp_size",
        "global_memory",
        "max_alloc_size",
        "multi_processor_count",
    },
    "vulkan": {
        "name",
        "compute_version",
        "max_threads_per_block",
        "max_shared_memory_per_block",
        "warp_size",
        "global_memory",
        "max_block_dim_x",
        "max_grid_dim_x",
    },
    "webgpu": {
        "name",
        "vendor",
        "compute_version",
        "max_threads_per_block",
        "max_shared_memory_per_block",
        "warp_size",
        "max_alloc_size",
    },
}


def test_the_names_follow_the_c_enum():
    header = Path(ROOT, "core/include/modrt/abi/device_extensions.h").read_text()
    enum_names = header.split("ModrtDeviceAttrInfoOf", 1)[1].split("};", 1)[0]
    assert modrt.runtime.device_attribute_names() == tuple(
        line.split('"')[1] for line in enum_names.splitlines() if '"' in line
    )
    assert set(modrt.runtime.device_attribute_names()) == set(INT_ATTRIBUTES + STRING_ATTRIBUTES)


def device_of_selected_runtime(kind: str) -> modrt.Device:
    """The backend's device 0; skips only when this build did not select its
    runtime (a selected runtime without its device here fails)."""
    dev = modrt.device(kind, 0)
    if not dev.exist and "build with --//backends:" in dev.unavailable_reason:
        pytest.skip(f"{kind}: runtime not selected in this build")
    assert dev.exist, dev.unavailable_reason
    return dev


@pytest.mark.parametrize("kind", sorted(REPORTED))
def test_every_backend_answers_the_well_known_attributes_in_their_types(kind):
    dev = device_of_selected_runtime(kind)
    attributes = dev.attributes()
    assert REPORTED[kind] <= set(attributes), attributes
    for name, value in attributes.items():
        assert isinstance(value, str if name in STRING_ATTRIBUTES else int), (name, value)
        assert value == dev.attr(name)
        if name not in STRING_ATTRIBUTES:
            assert value > 0, (name, value)
    assert dev.total_memory == attributes.get("global_memory")
    assert dev.max_threads_per_block == attributes.get("max_threads_per_block")
    assert dev.max_block_dims[0] == attributes.get("max_block_dim_x")


@pytest.mark.parametrize(
    ("kind", "name", "kinds_of_value"),
    [("vulkan", "supports_float64", (int,)), ("opencl", "device_version", (str,))],
)
def test_a_backends_own_attributes_stay_named(kind, name, kinds_of_value):
    value = device_of_selected_runtime(kind).attr(name)
    assert isinstance(value, kinds_of_value), value
    if name.startswith("supports_"):
        assert value in (0, 1)


def test_an_unknown_attribute_is_none():
    assert modrt.device("cpu", 0).attr("no_such_attribute") is None


@pytest.mark.parametrize("kind", ["cpu", "opencl", "cuda", "hexagon"])
def test_a_device_that_does_not_exist_answers_none(kind):
    # Index 4096: no device of any backend here; typed `str | None`, so no raise.
    dev = modrt.device(kind, 4096)
    assert not dev.exist and dev.unavailable_reason
    assert dev.name is None and dev.max_threads_per_block is None
    assert dev.attributes() == {}


ACME = """
import sys, modrt
modrt.backend.load_plugin(sys.argv[1])
dev = modrt.device("acme", 1)
print("attributes", sorted(dev.attributes().items()))
print("cores", dev.attr("cores"))
try:
    modrt.device("acme", 0).vendor
except TypeError as e:
    print("TypeError", e)
"""


@pytest.mark.parametrize("plugin", ["tests/plugins/acme_test_backend.so", "tests/abi/frozen_1_0_acme_plugin.so"])
def test_a_plugin_answers_typed_or_by_name_and_a_wrong_type_is_refused(plugin):
    proc = modrt_testing.run_python(ACME, args=[str(ROOT / plugin)])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "attributes [('max_threads_per_block', 256), ('name', 'acme1')]"
    assert lines[1] == "cores 16"
    assert lines[2].startswith("TypeError") and "'vendor'" in lines[2], lines[2]
