"""What the CUDA tests share: the kernels `vadd` (c = a + b, n elements) and
`block_sum` (each block's slice of x summed in dynamic shared memory into
out[blockIdx.x]), which the driver test double's tests launch to see what
reaches the driver and gpu_test.py runs on a GPU; and DriverLog, the test
double's record of the driver calls."""

import ctypes
import json
import os

KERNELS = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void block_sum(const int* x, int* out) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = scratch[0];
}
"""
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    "block_sum(int32*, int32*; blockIdx.x, threadIdx.x, dyn_shared_mem)",
]


class DriverLog:
    """What the test double recorded (the same loaded library as the runtime's)."""

    def __init__(self) -> None:
        path = os.path.abspath(os.environ["MODRT_CUDA_DRIVER_LIBRARY"])
        assert os.path.basename(path) == "libcuda_test_double.so"
        self.lib = ctypes.CDLL(path)
        self.lib.modrt_cuda_test_double_log.restype = ctypes.c_char_p
        self.lib.modrt_cuda_test_double_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]

    def reset(self) -> None:
        self.lib.modrt_cuda_test_double_reset()

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in self.lib.modrt_cuda_test_double_log().decode().splitlines()]

    def calls(self, name: str) -> list[dict]:
        return [entry for entry in self.entries() if entry["call"] == name]

    def fail_next(self, call: str, code: int, times: int = 1) -> None:
        """The next `times` calls of `call` into the double return `code`."""
        self.lib.modrt_cuda_test_double_fail_next(call.encode(), code, times)
