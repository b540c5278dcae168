"""Out-of-tree backends through the `modrt.backends` entry-point group: a real
distribution (a .dist-info with entry_points.txt) on sys.path, whose hook loads
its own plugin DSO and registers a device kind and a target detector."""

from __future__ import annotations

import textwrap
from pathlib import Path

import modrt._ffi
import modrt_testing

PLUGIN = Path(modrt._ffi.package_root(), "tests", "plugins", "acme_test_backend.so")

ACME_HOOK = f"""
import modrt
from modrt.target import Target, register_device_target_detector

calls = 0

def register():
    global calls
    calls += 1
    modrt.backend.load_plugin({str(PLUGIN)!r})
    register_device_target_detector("acme", lambda dev: Target("acme", cores=dev.attr("cores")))
"""


def install_distribution(site: Path, dist: str, module: str, code: str, entry_points: str) -> None:
    """What `pip install` leaves behind: the module and its .dist-info."""
    (site / f"{module}.py").write_text(textwrap.dedent(code))
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[modrt.backends]\n" + entry_points)


def run(site: Path, code: str, **env: str):
    pythonpath = str(site) + ":" + modrt_testing.current_pythonpath()
    return modrt_testing.run_python(textwrap.dedent(code), env={"PYTHONPATH": pythonpath, **env})


def test_entry_point_registers_a_backend_with_devices_and_a_target_detector(tmp_path):
    install_distribution(tmp_path, "acme_modrt", "acme_modrt", ACME_HOOK, "acme = acme_modrt:register\n")
    proc = run(
        tmp_path,
        """
        import modrt, acme_modrt
        print("loaded:", modrt.backend.loaded()["acme"])
        dev = modrt.device("acme", 1)
        print("device:", dev.exist, dev.name)
        print("target:", modrt.target.detect_target_from_device(dev))
        print("report:", [(r.name, r.driver_found, r.devices) for r in modrt.backend.report() if r.name == "acme"])
        modrt.backend.autoload()  # once per process: the entry point is not called again
        print("calls:", acme_modrt.calls)
        t = modrt.tensor([1.5, 2.5], device=dev)
        print("roundtrip:", t.numpy().tolist())
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "loaded: entry point acme (acme_modrt:register)" in proc.stdout
    assert "device: True acme1" in proc.stdout
    assert "target: Target('acme', cores=16)" in proc.stdout
    assert "report: [('acme', True, 2)]" in proc.stdout
    assert "calls: 1" in proc.stdout
    assert "roundtrip: [1.5, 2.5]" in proc.stdout
    assert "Warning" not in proc.stderr, proc.stderr


def test_autoload_disabled_skips_entry_points(tmp_path):
    install_distribution(tmp_path, "acme_modrt", "acme_modrt", ACME_HOOK, "acme = acme_modrt:register\n")
    proc = run(
        tmp_path,
        """
        import modrt, acme_modrt
        print("calls:", acme_modrt.calls, "loaded:", sorted(modrt.backend.loaded()))
    """,
        MODRT_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert proc.returncode == 0, proc.stderr
    assert "calls: 0 loaded: []" in proc.stdout


def test_raising_entry_point_warns_and_the_rest_loads(tmp_path):
    install_distribution(
        tmp_path,
        "broken_modrt",
        "broken_modrt",
        "def register():\n    raise RuntimeError('acme firmware not found')\n",
        "broken = broken_modrt:register\n",
    )
    install_distribution(tmp_path, "acme_modrt", "acme_modrt", ACME_HOOK, "acme = acme_modrt:register\n")
    proc = run(
        tmp_path,
        """
        import warnings
        warnings.simplefilter("always")
        import modrt
        print("failures:", modrt.backend.failures())
        print("acme:", modrt.device("acme").exist, "opencl hook:", modrt.backend.is_loaded("opencl"))
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "RuntimeWarning: modrt: backend entry point broken (broken_modrt:register) failed: acme firmware not found"
        in proc.stderr
    )
    assert (
        "'broken': 'entry point broken (broken_modrt:register): RuntimeError: acme firmware not found'" in proc.stdout
    )
    assert "acme: True opencl hook: True" in proc.stdout


def test_raising_in_tree_hook_warns_and_import_survives(tmp_path):
    hook = "backends/webgpu/python/modrt/backend/webgpu/__init__.py"
    tree = modrt_testing.copy_tree(
        tmp_path / "tree", replace={hook: b"def register_backend():\n    raise OSError('webgpu hook exploded')\n"}
    )
    proc = modrt_testing.run_python(
        textwrap.dedent("""
        import modrt
        print("webgpu:", modrt.backend.is_loaded("webgpu"), modrt.backend.failures().get("webgpu"))
        m = modrt.compile("void one(int* x) { x[0] = 1; }", "cpu", ["one(int32*)"])
        t = modrt.empty((1,), "int32"); m["one"](t); print("cpu:", t.numpy()[0])
        print("opencl hook:", modrt.backend.is_loaded("opencl"))
    """),
        tree=tree,
    )
    assert proc.returncode == 0, proc.stderr
    assert "modrt: backend hook webgpu failed: webgpu hook exploded" in proc.stderr
    assert "webgpu: False hook: OSError: webgpu hook exploded" in proc.stdout
    assert "cpu: 1" in proc.stdout and "opencl hook: True" in proc.stdout
