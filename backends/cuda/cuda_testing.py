"""The CUDA kernels the driver test double's tests and the GPU tests share:
`vadd` (c = a + b, n elements) and `block_sum` (each block's slice of x
summed in dynamic shared memory into out[blockIdx.x]). driver_test_double_test.py
checks what reaches the driver when they launch; gpu_test.py runs them on a GPU."""

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
