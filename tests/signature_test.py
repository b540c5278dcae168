"""The signature grammar (names, `const`, launch-filled scalars), how it is
saved (the first encoding kept where nothing new is used; artifacts versioned),
reflection at compile time (a target's reflector infers and checks
signatures), and calls by keyword."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import modrt
from modrt import _registry
from modrt._codegen import normalize_signature, parse_signature

INC = "void inc(int* x, const int* step, int n) { for (int i = 0; i < n; ++i) x[i] += step[i]; }"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("k(float32*, int32)", "k(float32*, int32)"),
        ("k(float32* a, const float32 *b, int32 n)", "k(float32* a, const float32* b, int32 n)"),
        (
            "k( float32*a , int32  packGridDimX=blockIdx.x ; blockIdx.x , threadIdx.x)",
            "k(float32* a, int32 packGridDimX = blockIdx.x; blockIdx.x, threadIdx.x)",
        ),
        ("k(uint8 count)", "k(uint8 count)"),
        ("k(uniform  uint32x4 p, float32* d)", "k(uniform uint32x4 p, float32* d)"),
        ("k(uniform float32)", "k(uniform float32)"),
    ],
)
def test_grammar_canonical_form(text: str, canonical: str) -> None:
    assert normalize_signature(text) == canonical
    assert normalize_signature(canonical) == canonical


def test_parse_signature_fields() -> None:
    name, args, tags = parse_signature("k(const float16* x, int64 g = blockIdx.y, float32 s; blockIdx.y)")
    assert name == "k" and tags == ["blockIdx.y"]
    assert [(a.dtype, a.is_buffer, a.name, a.read_only, a.launch_tag) for a in args] == [
        ("float16", True, "x", True, ""),
        ("int64", False, "g", False, "blockIdx.y"),
        ("float32", False, "s", False, ""),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k(const int32 n)", "only buffers may be const"),
        ("k(float32* a, int32 a)", "repeats the name 'a'"),
        ("k(int32 1n)", "not an identifier"),
        ("k(int32 g = blockIdx.x)", "which the signature does not list after ';'"),
        ("k(float32* g = blockIdx.x; blockIdx.x)", "only integer scalars may be filled from the launch"),
        ("k(float32 g = blockIdx.x; blockIdx.x)", "must be an integer scalar"),
        ("k(int32 = blockIdx.x; blockIdx.x)", "must be named"),
        ("k(int32 g = dyn_shared_mem; dyn_shared_mem)", "not a launch dimension"),
        ("k(const uniform uint32x4 p)", "is a uniform block, which the kernel only reads: it takes no const"),
        ("k(uniform uint32x4* p)", "is a uniform block: its dtype is the whole block's, written without '\\*'"),
        ("k(uniform uint32 g = blockIdx.x; blockIdx.x)", "only integer scalars may be filled from the launch"),
    ],
)
def test_grammar_refusals(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalize_signature(text)


def payload_bytes(signature: str) -> bytes:
    return modrt.Payload.create("single-binary", "cl", [signature], code=b"x").save()


def test_plain_signatures_keep_the_first_encoding() -> None:
    """Bytes without names, const or launch tags are the ones earlier modrt
    wrote: per argument a kind byte (0/1), then code, bits and u16 lanes."""
    data = payload_bytes("k(float32*, int32)")
    expected_args = bytes([1, 2, 32]) + struct.pack("<H", 1) + bytes([0, 0, 32]) + struct.pack("<H", 1)
    assert expected_args in data
    named = payload_bytes("k(const float32* a, int32 n)")
    assert named != data and len(named) > len(data)


def test_uniform_blocks_are_saved_with_kind_bit_2() -> None:
    """A uniform block's kind byte is 5 (a buffer, bit 2), 7 with a name;
    the argument reads back as a block, not as a buffer."""
    data = payload_bytes("k(uniform uint32x4, float32*)")
    assert bytes([5, 1, 32]) + struct.pack("<H", 4) + bytes([1, 2, 32]) + struct.pack("<H", 1) in data
    named = payload_bytes("k(uniform uint32x4 p)")
    assert bytes([7, 1, 32]) + struct.pack("<H", 4) + struct.pack("<Q", 1) + b"p" in named
    _, args, _ = parse_signature("k(uniform uint32x4 p, const float32* d)")
    assert [(a.dtype, a.is_buffer, a.uniform, a.read_only, str(a)) for a in args] == [
        ("uint32x4", True, True, False, "uniform uint32x4 p"),
        ("float32", True, False, True, "const float32* d"),
    ]


def test_a_cpu_function_takes_no_uniform_block() -> None:
    with pytest.raises(ValueError, match="^cpu function k: argument 0 is a uniform block, which only shaders declare$"):
        modrt.compile("void k(const float* p) {}", "cpu", ["k(uniform float32x4 p)"])


def test_extended_signatures_survive_save_and_load(tmp_path: Path) -> None:
    host = modrt.compile(INC, "cpu", ["inc(int32* x, const int32* step, int32 n)"])
    assert host.signature("inc") == "inc(int32* x, const int32* step, int32 n)"
    again = modrt.load_module_from_bytes("so", host.save_to_bytes())
    assert again.signature("inc") == "inc(int32* x, const int32* step, int32 n)"
    path = tmp_path / "inc.modrt"
    host.export(str(path))
    assert struct.unpack_from("<H", path.read_bytes(), 8) == (2,)
    manifest = modrt.artifact.read_manifest(str(path))
    assert manifest.format_version == 2
    loaded = modrt.load_module(str(path))
    x = modrt.tensor(np.arange(4, dtype="int32"))
    loaded["inc"](x, modrt.tensor(np.ones(4, dtype="int32")), 4)
    np.testing.assert_array_equal(x.numpy(), np.arange(1, 5))


def test_plain_artifacts_stay_version_1(tmp_path: Path) -> None:
    """A file without the new signature features is what earlier modrt wrote
    (version 1), and loads."""
    host = modrt.compile(INC, "cpu", ["inc(int32*, int32*, int32)"])
    path = tmp_path / "inc.modrt"
    host.export(str(path))
    assert struct.unpack_from("<H", path.read_bytes(), 8) == (1,)
    assert modrt.load_module(str(path)).signature("inc") == "inc(int32*, int32*, int32)"


def test_version_1_file_with_extended_signatures_is_refused(tmp_path: Path) -> None:
    host = modrt.compile(INC, "cpu", ["inc(int32* x, int32* step, int32 n)"])
    path = tmp_path / "inc.modrt"
    host.export(str(path))
    data = bytearray(path.read_bytes())
    data[8:10] = struct.pack("<H", 1)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="a version 1 file whose signatures need version 2"):
        modrt.load_module(str(path))
    # A higher version than the signatures need: not what any modrt writes.
    data[8:10] = struct.pack("<H", 3)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"format version 3 for signatures of version 2 \(a file is written"):
        modrt.load_module(str(path))
    data[8:10] = struct.pack("<H", 4)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="format version 4 is not supported .*versions 1 to 3"):
        modrt.load_module(str(path))


def test_keyword_arguments() -> None:
    host = modrt.compile(INC, "cpu", ["inc(int32* x, const int32* step, int32 n)"])
    fn = host["inc"]
    x = modrt.tensor(np.zeros(3, dtype="int32"))
    step = modrt.tensor(np.array([1, 2, 3], dtype="int32"))
    fn(x, n=3, step=step)
    fn(step=step, x=x, n=3)
    np.testing.assert_array_equal(x.numpy(), [2, 4, 6])
    with pytest.raises(TypeError, match="unexpected keyword argument 'count' .*x, step, n"):
        fn(x, step, count=3)
    with pytest.raises(TypeError, match="argument 'x' given twice"):
        fn(x, step, x=x, n=3)
    with pytest.raises(TypeError, match="missing argument: n"):
        fn(x, step=step)


def test_keywords_need_names() -> None:
    host = modrt.compile(INC, "cpu", ["inc(int32*, int32*, int32)"])
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'n' \(arguments: <argument 0>, <argument 1>"):
        host["inc"](modrt.tensor(np.zeros(3, dtype="int32")), n=3)
    with pytest.raises(TypeError, match="have no names"):
        modrt.get_global_func("signature.normalize")(signature="k()")


@pytest.fixture
def cpu_reflector(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reflector for cpu that reads what a C compiler would (a stand-in:
    the real ones are the device targets')."""
    reflector = modrt.backend.Reflector(lambda source: ["inc(int32* x, const int32* step, int32 n)"])
    monkeypatch.setitem(_registry._records, "cpu", modrt.backend.record("cpu").replace(reflector=reflector))


@pytest.mark.usefixtures("cpu_reflector")
def test_reflected_signatures_are_used_when_none_given() -> None:
    host = modrt.compile(INC, "cpu")
    assert host.signature("inc") == "inc(int32* x, const int32* step, int32 n)"
    assert modrt.compile(INC, "cpu", ["inc"]).signature("inc") == host.signature("inc")


@pytest.mark.usefixtures("cpu_reflector")
def test_given_signature_takes_the_kernels_names() -> None:
    host = modrt.compile(INC, "cpu", ["inc(int32*, int32*, int32)"])
    assert host.signature("inc") == "inc(int32* x, const int32* step, int32 n)"


@pytest.mark.usefixtures("cpu_reflector")
@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("inc(int32*, int32*)", "2 arguments in the signature, 3 in the kernel"),
        ("inc(float32*, int32*, int32)", r"argument 0 \('x'\) has buffer element type float32 in the signature, int32"),
        (
            "inc(int32*, int32*, int64)",
            r"argument 2 \('n'\) has scalar type int64 in the signature, int32 in the kernel",
        ),
        ("inc(int32*, int32, int32)", r"argument 1 \('step'\) is a scalar in the signature, a buffer in the kernel"),
        ("inc(int32* y, int32*, int32)", r"argument 0 \('y'\) is named 'y' in the signature, 'x' in the kernel"),
        ("inc(const int32* x, int32*, int32)", "is const in the signature, but the kernel may write it"),
    ],
)
def test_given_signature_is_checked_against_the_kernel(given: str, reason: str) -> None:
    with pytest.raises(modrt.SignatureError, match=reason) as info:
        modrt.compile(INC, "cpu", [given])
    assert f"given:  {normalize_signature(given)}" in str(info.value)
    assert "kernel: inc(int32* x, const int32* step, int32 n)" in str(info.value)


@pytest.mark.usefixtures("cpu_reflector")
def test_unknown_kernel_name_lists_the_kernels() -> None:
    with pytest.raises(ValueError, match=r"has no kernel 'dec' \(it defines: inc\)"):
        modrt.compile(INC, "cpu", ["dec"])


def test_targets_without_reflector_need_signatures() -> None:
    with pytest.raises(ValueError, match="compile for target 'cpu' needs function signatures"):
        modrt.compile(INC, "cpu")
    with pytest.raises(ValueError, match="give full signatures, not names"):
        modrt.compile(INC, "cpu", ["inc"])


FILL = "__kernel void fill(__global int* out, int grid) { out[get_global_id(0)] = grid; }"


@pytest.mark.skipif(not modrt.device("opencl").exist, reason="no OpenCL device here")
def test_launch_filled_scalar() -> None:
    """TVM's grid-size parameter: named in the signature, filled from the launch."""
    fill = modrt.compile(FILL, "opencl", ["fill(int32* out, int32 grid = blockIdx.x; blockIdx.x, threadIdx.x)"])
    out = modrt.empty((8,), "int32", modrt.device("opencl"))
    fill["fill"](out, 4, 2)
    np.testing.assert_array_equal(out.numpy(), [4] * 8)
    fill["fill"](out=out, blockIdx_x=2, threadIdx_x=4)
    np.testing.assert_array_equal(out.numpy(), [2] * 8)
    with pytest.raises(TypeError, match=r"fill takes 1 argument and 2 launch parameters .*got 4 values"):
        fill["fill"](out, 2, 2, 4)
    narrow = modrt.compile(
        FILL.replace("int grid", "char grid"),
        "opencl",
        ["fill(int32* out, int8 grid = blockIdx.x; blockIdx.x, threadIdx.x)"],
    )
    with pytest.raises(OverflowError, match=r"argument 'grid' \(int8\) is filled from blockIdx.x = 200"):
        narrow["fill"](modrt.empty((200,), "int32", modrt.device("opencl")), 200, 1)
