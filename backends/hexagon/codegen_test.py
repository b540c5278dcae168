"""Hexagon codegen: C through clang's Hexagon target, or a prebuilt object; never a host object."""

import subprocess

import pytest

import modrt

C = "void scale(float* x, float a, int n) { for (int i = 0; i < n; ++i) x[i] *= a; }"
SIG = "scale(float32*, float32, int32)"


def test_c_compiles_to_a_hexagon_shared_object():
    mod = modrt.compile(C, "hexagon", [SIG])
    assert mod.kind == "hexagon"
    assert mod.inspect_source("c") == C
    code = mod.inspect_source("so")
    assert code[:4] == b"\x7fELF" and int.from_bytes(code[18:20], "little") == 164


def test_a_prebuilt_object_is_carried_unchanged():
    built = modrt.compile(C, "hexagon", [SIG])
    code = built.inspect_source("so")
    again = modrt.compile(code, "hexagon", [SIG])
    assert again.inspect_source("so") == code


def test_a_host_object_is_refused(tmp_path):
    (tmp_path / "k.c").write_text(C)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", tmp_path / "k.so", tmp_path / "k.c"], check=True)
    with pytest.raises(ValueError, match=r"not for Hexagon \(machine 62, expected 164"):
        modrt.compile((tmp_path / "k.so").read_bytes(), "hexagon", [SIG])


def test_c_that_does_not_compile_shows_the_compiler_error():
    with pytest.raises(ValueError, match="clang failed"):
        modrt.compile("void scale(float* x) { nope; }", "hexagon", [SIG])


def test_codegen_and_the_runtime_apply_one_check():
    # elf.shared_object_problem in the core: codegen refuses what the runtime would (here a
    # relocatable object, e_type 1), with the same words, whether or not the runtime is loaded.
    code = bytearray(modrt.compile(C, "hexagon", [SIG]).inspect_source("so"))
    code[16:18] = (1).to_bytes(2, "little")
    with pytest.raises(ValueError, match=r"^the Hexagon ELF object is not a shared object \(type 1\)$"):
        modrt.compile(bytes(code), "hexagon", [SIG])
    assert modrt._ffi.call("elf.shared_object_problem", bytes(code), "Hexagon", 1, 164, "QDSP6") == (
        "the Hexagon ELF object is not a shared object (type 1)"
    )
