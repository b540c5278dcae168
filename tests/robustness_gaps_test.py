"""Odd inputs the design calls out, each answered with a clear error naming
what is wrong (or with the right answer), never a crash or a wrong lookup:
multi-shader payloads whose functions and shaders disagree, lookups through
host modules that import fallbacks, hooks and entry points that fail, and
distributions the entry-point pre-scan must not miss."""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

import modrt
import modrt_testing

MULTI_SHADER = {"vulkan": "spirv", "metal": "metal", "webgpu": "wgsl"}
SIGS = ["f(float32*; blockIdx.x, threadIdx.x)", "g(float32*; blockIdx.x, threadIdx.x)"]


def create(kind: str, payload: modrt.Payload) -> modrt.Module:
    return modrt.get_global_func(f"codegen.{kind}.create_module")(payload)


@pytest.mark.parametrize("kind", sorted(MULTI_SHADER))
def test_a_function_without_its_shader_is_refused_at_creation(kind):
    payload = modrt.Payload.create("multi-shader", MULTI_SHADER[kind], SIGS, shaders={"f": b"shader f"})
    with pytest.raises(ValueError, match="function 'g' has no shader in the payload \\(shaders: 'f'\\)"):
        create(kind, payload)


@pytest.mark.parametrize("kind", sorted(MULTI_SHADER))
def test_a_shader_without_its_function_is_refused_at_creation(kind):
    payload = modrt.Payload.create(
        "multi-shader", MULTI_SHADER[kind], SIGS[:1], shaders={"f": b"shader f", "h": b"shader h"}
    )
    with pytest.raises(ValueError, match="shader 'h' has no function signature in the payload"):
        create(kind, payload)


@pytest.mark.parametrize("kind", sorted(MULTI_SHADER))
def test_disagreeing_saved_bytes_are_refused_at_load(kind):
    """The same check on the load path, where this build loads the kind's
    runtime (vulkan under --config=cpu-runtimes); elsewhere there is no loader."""
    bad = modrt.Payload.create("multi-shader", MULTI_SHADER[kind], SIGS, shaders={"f": b"shader f"}).save()
    if modrt.backend.runtime_status(kind).loaded:
        with pytest.raises(ValueError, match="function 'g' has no shader in the payload"):
            modrt.load_module_from_bytes(kind, bad)
    else:
        with pytest.raises(ValueError, match=f"libmodrt_runtime_{kind}.so is not loaded"):
            modrt.load_module_from_bytes(kind, bad)


HOST_C = "void inc(int* x, int n) { for (int i = 0; i < n; ++i) x[i]++; }"
OPENCL_K = "__kernel void k(__global int* x) { x[0] = 1; }"


def test_a_function_behind_a_fallback_import_is_found_in_a_later_real_import(monkeypatch):
    host = modrt.compile("void nop(void) {}", "cpu", ["nop()"])
    monkeypatch.setenv("MODRT_COMPILE_FORCE_FALLBACK", "1")
    fallback = modrt.compile(OPENCL_K, "opencl", ["k(int32*; blockIdx.x, threadIdx.x)"])
    monkeypatch.delenv("MODRT_COMPILE_FORCE_FALLBACK")
    real = modrt.compile(HOST_C, "cpu", ["inc(int32*, int32)"])
    assert fallback.is_fallback and not real.is_fallback
    host.import_module(fallback)
    host.import_module(real)

    x = modrt.tensor(np.arange(4, dtype="int32"))
    host["inc"](x, 4)
    assert x.numpy().tolist() == [1, 2, 3, 4]
    with pytest.raises(AttributeError, match="has no function 'missing'"):
        host["missing"]
    # The fallback's own function still says why it cannot run.
    with pytest.raises(modrt.Error, match="OpenCL runtime is not linked into this build"):
        host["k"]


def run_with_site(site: Path, code: str, **env: str):
    pythonpath = str(site) + ":" + modrt_testing.current_pythonpath()
    return modrt_testing.run_python(textwrap.dedent(code), env={"PYTHONPATH": pythonpath, **env})


def write_hook(site: Path, name: str, body: str) -> None:
    """An installed hook package modrt.backend.<name> (modrt.backend is a namespace)."""
    pkg = site / "modrt" / "backend" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(body))


def test_a_hooks_own_import_error_is_reported_as_itself(tmp_path):
    write_hook(
        tmp_path,
        "brokenimport",
        """
        import modrt_dependency_that_is_not_installed
        def register_backend(): pass
    """,
    )
    proc = run_with_site(
        tmp_path,
        """
        import modrt
        try:
            modrt.backend.load("brokenimport")
        except ImportError as e:
            print(type(e).__name__, e.name, "|", e)
        try:
            modrt.backend.load("no_such_backend_hook")
        except ImportError as e:
            print("missing:", e)
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ModuleNotFoundError modrt_dependency_that_is_not_installed |" in proc.stdout
    assert "no backend hook modrt.backend.brokenimport" not in proc.stdout
    assert "missing: modrt: no backend hook modrt.backend.no_such_backend_hook" in proc.stdout


def test_a_register_backend_that_raises_leaves_nothing_half_registered(tmp_path):
    write_hook(
        tmp_path,
        "halfway",
        """
        import modrt
        def register_backend():
            modrt.backend.register_codegen("halfway", lambda *a: None)
            modrt.target.register_device_target_detector("halfway", lambda dev: None)
            modrt.backend.register_codegen("opencl", lambda *a: None)  # replaces a real one
            raise RuntimeError("register_backend gave up halfway")
    """,
    )
    proc = run_with_site(
        tmp_path,
        """
        import modrt
        try:
            modrt.backend.load("halfway")
        except RuntimeError as e:
            print("raised:", e)
        print("loaded:", modrt.backend.is_loaded("halfway"))
        try:
            modrt.compile("x", "halfway", ["f()"])
        except ValueError as e:
            print("compile:", e)
        try:
            modrt.target.detect_target_from_device("halfway")
        except ValueError as e:
            print("detector:", e)
        m = modrt.compile(
            "__kernel void k(__global int* x) { x[0] = 1; }", "opencl", ["k(int32*; blockIdx.x, threadIdx.x)"]
        )
        print("opencl codegen intact:", m.kind)
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "raised: register_backend gave up halfway" in proc.stdout
    assert "loaded: False" in proc.stdout
    assert "compile: no codegen for target 'halfway'" in proc.stdout
    assert "detector: no target detector for device type 'halfway'" in proc.stdout
    assert "opencl codegen intact: opencl" in proc.stdout


def test_an_entry_point_that_raises_leaves_nothing_half_registered(tmp_path):
    (tmp_path / "halfway_ep.py").write_text(
        textwrap.dedent("""
        import modrt
        def register():
            modrt.backend.register_codegen("halfway_ep", lambda *a: None)
            raise RuntimeError("entry point gave up")
    """)
    )
    write_dist_info(tmp_path, "halfway_ep", "halfway = halfway_ep:register\n")
    proc = run_with_site(
        tmp_path,
        """
        import warnings
        warnings.simplefilter("always")
        import modrt
        print("failed:", modrt.backend.failures().get("halfway"))
        try:
            modrt.compile("x", "halfway_ep", ["f()"])
        except ValueError as e:
            print("compile:", e)
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "failed: entry point halfway (halfway_ep:register): RuntimeError: entry point gave up" in proc.stdout
    assert "compile: no codegen for target 'halfway_ep'" in proc.stdout


def write_dist_info(site: Path, dist: str, entry_points: str) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[modrt.backends]\n" + entry_points)


# An entry point that also uses modrt.artifact: autoload runs last, so the
# modrt namespace is complete when it is called.
EP_MODULE = """
import modrt
def register():
    global seen
    seen = modrt.artifact.__name__
"""

EP_PROBE = """
import modrt, {module}
print("loaded:", modrt.backend.loaded().get("{name}"), "seen:", getattr({module}, "seen", None))
print("failures:", modrt.backend.failures())
"""


def test_an_entry_point_in_a_zipped_distribution_is_found(tmp_path):
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped_ep.py", EP_MODULE)
        z.writestr("zipped_ep-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped_ep\nVersion: 1.0\n")
        z.writestr("zipped_ep-1.0.dist-info/entry_points.txt", "[modrt.backends]\nzipped = zipped_ep:register\n")
    proc = modrt_testing.run_python(
        EP_PROBE.format(module="zipped_ep", name="zipped"),
        env={"PYTHONPATH": f"{archive}:{modrt_testing.current_pythonpath()}"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "loaded: entry point zipped (zipped_ep:register) seen: modrt.artifact" in proc.stdout, proc.stdout


def test_an_entry_point_of_a_finder_only_distribution_is_found(tmp_path):
    """A distribution no sys.path directory holds: a meta-path finder yields it."""
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "finder_ep.py").write_text(EP_MODULE)
    (tmp_path / "metadata").mkdir()
    write_dist_info(tmp_path / "metadata", "finder_ep", "finder = finder_ep:register\n")
    code = f"""
import sys
from importlib.metadata import DistributionFinder, PathDistribution
from pathlib import Path

class OnlyHere(DistributionFinder):
    def find_spec(self, *args, **kwargs):
        return None
    def find_distributions(self, context=DistributionFinder.Context()):
        if context.name in (None, "finder_ep"):
            yield PathDistribution(Path({str(tmp_path / "metadata" / "finder_ep-1.0.dist-info")!r}))

sys.meta_path.append(OnlyHere())
sys.path.append({str(tmp_path / "modules")!r})
"""
    proc = modrt_testing.run_python(code + EP_PROBE.format(module="finder_ep", name="finder"))
    assert proc.returncode == 0, proc.stderr
    assert "loaded: entry point finder (finder_ep:register) seen: modrt.artifact" in proc.stdout, proc.stdout


def test_an_entry_point_can_use_modrt_artifact(tmp_path):
    (tmp_path / "plain_ep.py").write_text(EP_MODULE)
    write_dist_info(tmp_path, "plain_ep", "plain = plain_ep:register\n")
    proc = run_with_site(tmp_path, EP_PROBE.format(module="plain_ep", name="plain"))
    assert proc.returncode == 0, proc.stderr
    assert "loaded: entry point plain (plain_ep:register) seen: modrt.artifact" in proc.stdout, proc.stdout
    assert "failures: {}" in proc.stdout
