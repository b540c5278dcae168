"""modrt._ffi's copy of the C ABI (core/include/modrt/abi/c_api.h, c_types.h,
plugin_api.h) agrees with the headers: the version, every enum value, and the
size and field offsets of each ctypes structure, as a C compiler lays them out."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from modrt import _ffi

HEADERS = Path(os.environ["TEST_SRCDIR"], "_main", "core", "include")


def header(name: str) -> str:
    return (HEADERS / "modrt" / "abi" / name).read_text()


def enum_values(text: str, type_name: str) -> dict[str, int]:
    """`kName = N` entries of `typedef enum { ... } type_name;`."""
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    match = re.search(r"typedef enum \{([^{}]*)\}\s*" + type_name + ";", code)
    assert match, f"no enum {type_name}"
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)\s*=\s*(\d+)", match.group(1))}


def test_abi_version():
    version = re.search(r"#define MODRT_ABI_VERSION (\d+)", header("c_api.h"))
    assert version and int(version.group(1)) == _ffi.ABI_VERSION
    assert _ffi.LIB.ModrtAbiVersion() == _ffi.ABI_VERSION


ENUMS = [
    (
        "c_types.h",
        "ModrtTypeCode",
        {
            "kModrtNone": _ffi.NONE,
            "kModrtInt": _ffi.INT,
            "kModrtFloat": _ffi.FLOAT,
            "kModrtOpaquePtr": _ffi.OPAQUE_PTR,
            "kModrtDevice": _ffi.DEVICE,
            "kModrtDLTensorPtr": _ffi.DLTENSOR_PTR,
            "kModrtRawStr": _ffi.RAW_STR,
            "kModrtObject": _ffi.OBJECT,
        },
    ),
    (
        "c_types.h",
        "ModrtObjectType",
        {
            "kModrtObjString": _ffi.OBJ_STRING,
            "kModrtObjBytes": _ffi.OBJ_BYTES,
            "kModrtObjFunction": _ffi.OBJ_FUNCTION,
            "kModrtObjModule": _ffi.OBJ_MODULE,
            "kModrtObjTensor": _ffi.OBJ_TENSOR,
            "kModrtObjPayload": _ffi.OBJ_PAYLOAD,
        },
    ),
    (
        "plugin_api.h",
        "ModrtPayloadShape",
        {
            "kModrtSingleBinary": _ffi.PAYLOAD_SHAPES["single-binary"],
            "kModrtMultiShader": _ffi.PAYLOAD_SHAPES["multi-shader"],
        },
    ),
]


@pytest.mark.parametrize(("header_name", "enum", "python_values"), ENUMS, ids=[e[1] for e in ENUMS])
def test_enum_values(header_name, enum, python_values):
    assert enum_values(header(header_name), enum) == python_values


# (ctypes structure, C type, C field for each ctypes field)
STRUCTS = [
    (_ffi.DLDevice, "DLDevice", {"device_type": "device_type", "device_id": "device_id"}),
    (_ffi.DLDataType, "DLDataType", {"code": "code", "bits": "bits", "lanes": "lanes"}),
    (_ffi.DLTensor, "DLTensor", {f: f for f, _ in _ffi.DLTensor._fields_}),
    (_ffi.ModrtValue, "ModrtValue", {"type_code": "type_code", "reserved": "reserved", "u": "v_int64"}),
    (_ffi.BackendIdentity, "ModrtBackendIdentity", {f: f for f, _ in _ffi.BackendIdentity._fields_}),
]


def c_layout(tmp_path: Path) -> dict[str, int]:
    """sizeof and offsetof of every STRUCTS entry, printed by a compiled C program."""
    lines = []
    for _, c_type, fields in STRUCTS:
        lines.append(f'printf("{c_type} %zu\\n", sizeof({c_type}));')
        for py_field, c_field in fields.items():
            lines.append(f'printf("{c_type}.{py_field} %zu\\n", offsetof({c_type}, {c_field}));')
    source = tmp_path / "layout.c"
    source.write_text(
        '#include <stddef.h>\n#include <stdio.h>\n#include "modrt/abi/c_api.h"\n#include "modrt/abi/plugin_api.h"\n'
        "int main(void) {\n" + "\n".join(lines) + "\nreturn 0;\n}\n"
    )
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler")
    binary = tmp_path / "layout"
    subprocess.run([compiler, "-I", str(HEADERS), str(source), "-o", str(binary)], check=True)
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return {name: int(value) for name, value in (line.split() for line in out.splitlines())}


def test_struct_layouts(tmp_path):
    layout = c_layout(tmp_path)
    for cls, c_type, fields in STRUCTS:
        assert ctypes.sizeof(cls) == layout[c_type], c_type
        for py_field in fields:
            assert getattr(cls, py_field).offset == layout[f"{c_type}.{py_field}"], f"{c_type}.{py_field}"
