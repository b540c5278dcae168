"""The Hexagon runtime DSO: real modules that validate their object, and a
device that reports why it cannot be used (no FastRPC here)."""

import os

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


def test_driver_library_variable_names_the_driver(tmp_path):
    # MODRT_HEXAGON_DRIVER_LIBRARY replaces the system's FastRPC library: a missing file is named.
    import subprocess
    import sys

    missing = tmp_path / "libcdsprpc_missing.so"
    code = "import modrt; d = modrt.device('hexagon'); print(d.exist); print(d.unavailable_reason)"
    env = dict(os.environ, MODRT_HEXAGON_DRIVER_LIBRARY=str(missing))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    exist, reason = proc.stdout.splitlines()[:2]
    assert exist == "False" and str(missing) in reason and "no Hexagon DSP reachable" in reason


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
