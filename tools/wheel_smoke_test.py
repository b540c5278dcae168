"""The smoke subset run from the installed wheels on the host's own python3
(tools/wheel_smoke.sh runs it with the venv's interpreter; not a Bazel test).

Everything here imports modrt from the venv's site-packages: the wheels, not
the checkout. OpenCL (PoCL) and Vulkan (Mesa's lavapipe) results are checked
against numpy; CUDA and ROCm, which have no device here, must say why.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import modrt

SITE = Path(sysconfig.get_paths()["purelib"])
N = 1000


def test_modrt_comes_from_the_installed_wheels() -> None:
    assert Path(modrt.__file__).is_relative_to(SITE), modrt.__file__
    assert Path(modrt._ffi_ext.__file__).name == "_ffi_ext.abi3.so"
    for name in ("opencl", "vulkan", "cuda", "rocm", "hexagon"):
        status = modrt.backend.runtime_status(name)
        assert status.loaded, (name, status)
        assert status.origin == f"wheel modrt-{name} {modrt.__version__}", (name, status)
        assert Path(status.path).is_relative_to(SITE / f"modrt_{name}")


def test_calls_cross_the_ffi_on_this_python() -> None:
    add = modrt.register_func("smoke.add", lambda a, b: a + b, override=True)
    f = modrt.get_global_func("smoke.add")
    assert add is not None and f(2, 40) == 42 and f(0.5, 0.25) == 0.75
    with pytest.raises(TypeError):
        f(1, b=2)


def _kernel(target: str):
    source, signature = modrt.backend.record(target).demo
    return modrt.compile(source, target, [signature])


@pytest.mark.parametrize("target", ["opencl", "vulkan"])
def test_device_results_match_numpy(target: str) -> None:
    dev = modrt.device(target)
    assert dev.exist, dev.unavailable_reason
    mod = _kernel(target)
    assert not mod.is_fallback
    rng = np.random.default_rng(0)
    a, b = rng.random(N, dtype="float32"), rng.random(N, dtype="float32")
    c = modrt.empty((N,), "float32", dev)
    block = 64
    mod["vadd"](modrt.tensor(a, dev), modrt.tensor(b, dev), c, N, (N + block - 1) // block, block)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


@pytest.mark.parametrize("target", ["opencl", "vulkan"])
def test_artifacts_round_trip_through_a_file(target: str, tmp_path: Path) -> None:
    mod = _kernel(target)
    mod.export(str(tmp_path / "k.modrt"))
    manifest = modrt.artifact.read_manifest(str(tmp_path / "k.modrt"))
    assert manifest.modules[0].kind == target
    loaded = modrt.load_module(str(tmp_path / "k.modrt"))
    assert loaded.save_to_bytes() == mod.save_to_bytes()


@pytest.mark.parametrize("target, driver", [("cuda", "libcuda"), ("rocm", "libamdhip64")])
def test_runtimes_without_a_device_say_why(target: str, driver: str) -> None:
    dev = modrt.device(target)
    if dev.exist:  # a GPU machine: nothing to explain
        pytest.skip(f"{target} has a device here: {dev.name}")
    assert driver in dev.unavailable_reason, dev.unavailable_reason
    with pytest.raises(ValueError, match=driver):
        modrt.target.detect_target_from_device(dev)


def test_modrt_demo(tmp_path: Path) -> None:
    demo = Path(sys.executable).parent / "modrt"
    proc = subprocess.run(
        [str(demo), "demo"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every real result matches numpy" in proc.stdout
    # OpenCL and Vulkan ran real modules on this host's PoCL and lavapipe.
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("opencl ", "vulkan "))]
    assert len(rows) == 2 and all(row.split()[1] == "real" and "matches numpy" in row for row in rows), rows


def test_tinygrad_finds_the_modrt_device_with_no_other_step(tmp_path: Path) -> None:
    """`pip install modrt[tinygrad]`, then DEV=MODRT:opencl: tinygrad imports
    tinygrad.runtime.ops_modrt from its own package and runs there."""
    script = (
        "import tinygrad.runtime.ops_modrt as m, numpy as np\n"
        "from tinygrad import Device, Tensor\n"
        "a = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
        "got = (Tensor(a) @ Tensor(a.T) + 1).numpy()\n"
        "assert np.allclose(got, a @ a.T + 1), got\n"
        "print(m.__file__, Device.DEFAULT, Device[Device.DEFAULT].modrt_device)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env={**env, "DEV": "MODRT:opencl"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    module, default, device = proc.stdout.split()
    assert Path(module).parent.name == "runtime" and Path(module).parent.parent.name == "tinygrad"
    assert (default, device) == ("MODRT", "opencl(0)")


def test_the_ray_extra_runs_a_session() -> None:
    """`pip install modrt[ray]`: the pinned Ray, mpi4py and MPICH, and
    modrt.distributed from the wheel running two workers on a local Ray
    cluster, their allreduce through MPI."""
    from importlib.metadata import version

    assert (version("ray"), version("mpi4py"), version("mpich")) == ("2.60.0", "4.1.2", "4.3.2")
    code = (
        "import numpy as np, modrt.distributed as md\n"
        "with md.Session(devices=2, timeout=120) as sess:\n"
        "    t = sess.shard(np.arange(4, dtype='float32'))\n"
        "    sess.allreduce(t)\n"
        "    print([p.tolist() for p in sess.local_parts(t)])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[[2.0, 4.0], [2.0, 4.0]]"
