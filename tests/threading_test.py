"""modrt from many Python threads at once: concurrent backend loading, registry
registration and lookup, first calls into one host module, and threads that
wait. A call keeps the GIL except where it blocks (modrt._ffi_ext and the
core's wait hooks): a thread waiting for a kernel, or for room at the
in-flight limit, lets the other threads run."""

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


# A cpu kernel that runs until flag[0] != 0 (launched by release_from_this_thread); the flag is a numpy array that
# this process sets from Python, shared with the kernel through DLPack.
SPIN_SETUP = """
import sys, threading, time, numpy as np, modrt, modrt._waits
mod = modrt.compile("void spin(int* flag) { volatile int* f = flag; while (f[0] == 0) {} }",
                    "cpu", ["spin(int32*)"])
host_flag = np.zeros(1, "int32")
flag = modrt.from_dlpack(host_flag)
stream = modrt.Stream(modrt.device("cpu"))
outcome = []
entered = threading.Event()

def run_blocked(call):
    entered.set()
    try:
        call()
        outcome.append("completed")
    except TimeoutError as e:
        outcome.append(f"timed out: {e}")

def release_from_this_thread(call):
    # `call` blocks on another thread until this thread's Python code sets the
    # flag. time.sleep(0) hands the GIL over until that thread is in its wait;
    # a wait that kept the GIL would hold this thread until it gave up.
    with modrt.stream(stream):
        mod["spin"](flag)
    blocked = threading.Thread(target=run_blocked, args=(call,))
    blocked.start()
    entered.wait()
    for _ in range(100):
        time.sleep(0)
    host_flag[0] = 1
    blocked.join()
    print(outcome[0])
"""


def test_a_thread_waiting_for_a_kernel_lets_other_threads_run():
    # One native wait for the whole bound (no slices that would hand the GIL
    # over between them), so only a wait that lets the GIL go completes.
    code = (
        SPIN_SETUP
        + """
modrt._waits._SLICE_S = 600.0
release_from_this_thread(lambda: stream.synchronize(timeout=120))
"""
    )
    proc = modrt_testing.run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "completed", proc.stdout


def test_a_launch_held_at_the_in_flight_limit_lets_other_threads_run():
    # MODRT_MAX_IN_FLIGHT=1: with the spinning kernel pending, the next launch
    # waits for room; a launch that kept the GIL while it waits would never
    # let this thread set the flag (the run's own timeout ends it).
    code = (
        SPIN_SETUP
        + """
ones = modrt.tensor(np.ones(4, "float32"))
vadd = modrt.compile("void vadd(const float* a, float* b, int n) { for (int i = 0; i < n; ++i) b[i] += a[i]; }",
                     "cpu", ["vadd(float32*, float32*, int32)"])["vadd"]
def launch_behind_the_spin():
    with modrt.stream(stream):
        vadd(ones, ones, 4)
release_from_this_thread(launch_behind_the_spin)
stream.synchronize(timeout=120)
print(ones.numpy().tolist())
"""
    )
    proc = modrt_testing.run_python(code, env={"MODRT_MAX_IN_FLIGHT": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["completed", "[2.0, 2.0, 2.0, 2.0]"], proc.stdout
