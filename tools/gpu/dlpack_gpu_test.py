"""DLPack 1.x round trips between modrt CUDA tensors and PyTorch / CuPy CUDA
tensors, on a real NVIDIA GPU: zero-copy both ways (checked by writing through
one side and reading the other), a modrt kernel on memory PyTorch/CuPy own,
and strided input refused with how to make it compact.

Run on a GPU machine by `tools/gpu/cuda_e2e.sh --dlpack` (from a stage built
with `tools/gpu/cuda_e2e.sh --stage-only`); results go to docs/GPU.md.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import modrt

VADD = """
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}"""
SIG = "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"
N = 1000

_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


@pytest.fixture(scope="module")
def dev() -> modrt.Device:
    d = modrt.device("cuda")
    if not d.exist:
        pytest.skip(f"no CUDA device: {d.unavailable_reason}")
    return d


class Torch:
    name = "torch"

    def __init__(self) -> None:
        self.lib = pytest.importorskip("torch")
        if not self.lib.cuda.is_available():
            pytest.skip("torch sees no CUDA device")

    def arange(self, n: int):
        return self.lib.arange(n, dtype=self.lib.float32, device="cuda")

    def to_numpy(self, x) -> np.ndarray:
        self.lib.cuda.synchronize()
        return x.cpu().numpy()

    def from_dlpack(self, t):
        return self.lib.from_dlpack(t)

    def ptr(self, x) -> int:
        return x.data_ptr()

    def sync(self) -> None:
        self.lib.cuda.synchronize()

    def transposed(self):
        return self.lib.zeros((4, 8), device="cuda").t()


class CuPy:
    name = "cupy"

    def __init__(self) -> None:
        self.lib = pytest.importorskip("cupy")

    def arange(self, n: int):
        return self.lib.arange(n, dtype=self.lib.float32)

    def to_numpy(self, x) -> np.ndarray:
        self.lib.cuda.runtime.deviceSynchronize()
        return self.lib.asnumpy(x)

    def from_dlpack(self, t):
        return self.lib.from_dlpack(t)

    def ptr(self, x) -> int:
        return x.data.ptr

    def sync(self) -> None:
        self.lib.cuda.runtime.deviceSynchronize()

    def transposed(self):
        return self.lib.zeros((4, 8), dtype=self.lib.float32).T


@pytest.fixture(params=[Torch, CuPy], ids=["torch", "cupy"])
def lib(request):
    return request.param()


def test_producer_to_modrt_is_zero_copy(dev, lib) -> None:
    x = lib.arange(N)
    capsule = x.__dlpack__(max_version=(1, 0))
    print(lib.name, "exports", "dltensor_versioned" if _is_valid(capsule, b"dltensor_versioned") else "dltensor")
    t = modrt.from_dlpack(x)
    assert t.device.kind == "cuda" and t.shape == (N,) and t.dtype == "float32"
    assert t._dl().data == lib.ptr(x)  # the same device memory
    x[3] = 42  # the producer writes, modrt reads
    lib.sync()
    assert t.numpy()[3] == 42
    t.copyfrom(np.ones(N, dtype="float32"))  # modrt writes, the producer reads
    assert (lib.to_numpy(x) == 1).all()


def test_modrt_to_consumer_is_zero_copy(dev, lib) -> None:
    t = modrt.tensor(np.arange(N, dtype="float32"), dev)
    y = lib.from_dlpack(t)
    assert lib.ptr(y) == t._dl().data
    y[0] = 7
    lib.sync()
    assert t.numpy()[0] == 7
    t.copyfrom(np.full(N, 2, dtype="float32"))
    assert (lib.to_numpy(y) == 2).all()


def test_a_modrt_kernel_on_the_producers_memory(dev, lib) -> None:
    mod = modrt.compile(VADD, "cuda", [SIG])
    a, b, c = lib.arange(N), lib.arange(N), lib.arange(N) * 0
    lib.sync()
    mod["vadd"](modrt.from_dlpack(a), modrt.from_dlpack(b), modrt.from_dlpack(c), N, (N + 127) // 128, 128)
    dev.sync()
    assert (lib.to_numpy(c) == 2 * np.arange(N, dtype="float32")).all()


def test_strided_device_memory_is_refused_with_the_fix(dev, lib) -> None:
    with pytest.raises(ValueError, match=r"not compact row-major.*x\.contiguous\(\).*cupy\.ascontiguousarray"):
        modrt.from_dlpack(lib.transposed())
