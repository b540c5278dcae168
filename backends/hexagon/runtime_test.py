"""The Hexagon runtime DSO: real modules that validate their object, and a
device that reports why it cannot be used (no FastRPC here)."""

import pytest

import modrt

C = "void scale(float* x, float a, int n) { for (int i = 0; i < n; ++i) x[i] *= a; }"
SIG = "scale(float32*, float32, int32)"


def test_runtime_is_loaded_and_modules_are_real():
    assert modrt.backend.runtime_status("hexagon").loaded
    mod = modrt.compile(C, "hexagon", [SIG])
    assert mod.kind == "hexagon" and not mod.is_fallback


def test_real_and_fallback_bytes_are_identical(monkeypatch):
    real = modrt.compile(C, "hexagon", [SIG])
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(C, "hexagon", [SIG])
    assert fallback.is_fallback and fallback.kind == real.kind
    assert fallback.save_to_bytes() == real.save_to_bytes()
    loaded = modrt.load_module_from_bytes("hexagon", fallback.save_to_bytes())
    assert not loaded.is_fallback and loaded.save_to_bytes() == real.save_to_bytes()


def test_device_does_not_exist_and_says_why():
    dev = modrt.device("hexagon")
    assert not dev.exist
    assert "libcdsprpc.so" in dev.unavailable_reason


def test_launch_is_refused_with_the_reason():
    mod = modrt.compile(C, "hexagon", [SIG])
    with pytest.raises(RuntimeError, match="cannot launch scale on Hexagon: .*libcdsprpc.so"):
        mod.get_function("scale")


def test_loading_a_host_object_is_refused(tmp_path):
    import subprocess

    (tmp_path / "k.c").write_text(C)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", tmp_path / "k.so", tmp_path / "k.c"], check=True)
    payload = modrt.Payload.create("single-binary", "so", [SIG], code=(tmp_path / "k.so").read_bytes())
    with pytest.raises(ValueError, match="not for Hexagon"):
        modrt.load_module_from_bytes("hexagon", payload.save())
    truncated = modrt.Payload.create("single-binary", "so", [SIG], code=b"\x7fELF\x01\x01")
    with pytest.raises(ValueError, match="must be an ELF shared object"):
        modrt.load_module_from_bytes("hexagon", truncated.save())
