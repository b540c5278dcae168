"""modrt from many Python threads at once (modrt._ffi_ext releases the GIL
around native calls, so these calls really overlap): concurrent backend loading, registry
registration and lookup, and first calls into one host module."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import modrt
import modrt_testing

THREADS = 16


def run_together(body: Callable[[int], None]) -> None:
    modrt_testing.run_together(body, THREADS)


def test_concurrent_backend_load():
    # In a fresh process with autoload off, so every load really is a first one.
    code = f"""
import threading, modrt
barrier = threading.Barrier({THREADS})
errors = []
def run():
    barrier.wait()
    try:
        for name in modrt.backend.in_tree():
            modrt.backend.load(name)
    except BaseException as e:
        errors.append(e)
threads = [threading.Thread(target=run) for _ in range({THREADS})]
[t.start() for t in threads]; [t.join() for t in threads]
assert not errors, errors
assert sorted(modrt.backend.loaded()) == sorted(modrt.backend.in_tree()), modrt.backend.loaded()
assert modrt.compile("@compute @workgroup_size(1) fn one() {{}}", "webgpu", ["one()"]).kind == "webgpu"
print("loaded", len(modrt.backend.loaded()))
"""
    proc = modrt_testing.run_python(code, env={"MODRT_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"loaded {len(modrt.backend.in_tree())}", proc.stdout


def test_concurrent_registration_and_lookup():
    per_thread = 50

    def body(i: int) -> None:
        for k in range(per_thread):
            modrt.register_func(f"testing.py_threads.{i}.{k}", lambda i=i, k=k: i * 1000 + k)
            other = modrt.get_global_func(f"testing.py_threads.{(i + 1) % THREADS}.{k}", allow_missing=True)
            if other is not None:
                assert other() == ((i + 1) % THREADS) * 1000 + k
            # Native globals stay callable while Python registers.
            assert modrt.get_global_func("signature.normalize")("f(float32 *)") == "f(float32*)"

    run_together(body)
    for i in range(THREADS):
        for k in range(per_thread):
            assert modrt.get_global_func(f"testing.py_threads.{i}.{k}")() == i * 1000 + k


def test_concurrent_first_calls_into_one_host_module():
    module = modrt.compile(
        "void fill(int* x, int v, int n) { for (int i = 0; i < n; ++i) x[i] = v + i; }",
        "cpu",
        ["fill(int32*, int32, int32)"],
    )

    def body(i: int) -> None:
        x = modrt.empty((64,), "int32")
        for k in range(20):
            module["fill"](x, i * 100 + k, 64)
            np.testing.assert_array_equal(x.numpy(), np.arange(64) + i * 100 + k)

    run_together(body)
