"""What the CUDA tests share: the kernels `vadd` (c = a + b, n elements) and
`block_sum` (each block's slice of x summed in dynamic shared memory into
out[blockIdx.x]), which the driver test double's tests launch to see what
reaches the driver and gpu_test.py runs on a GPU; and DriverLog, the test
double's record of the driver calls (tests/driver_doubles/driver_doubles.py)."""

from driver_doubles import DriverDoubleLog

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


class DriverLog(DriverDoubleLog):
    """What the CUDA driver's test double recorded (//tests/driver_doubles)."""

    def __init__(self) -> None:
        super().__init__("MODRT_CUDA_DRIVER_LIBRARY", "libcuda_test_double.so", "modrt_cuda_test_double")
