
#ifdef __CUDACC_RTC__
  #include <cuda/std/cstdint>
  using cuda::std::uint8_t;
  using cuda::std::uint16_t;
  using cuda::std::uint32_t;
  using cuda::std::uint64_t;
  using cuda::std::int8_t;
  using cuda::std::int16_t;
  using cuda::std::int32_t;
  using cuda::std::int64_t;

  #include <cuda/std/type_traits>
  namespace std {
    using cuda::std::is_same;
    using cuda::std::is_same_v;
    using cuda::std::is_integral;
    using cuda::std::is_signed;
    using cuda::std::is_unsigned;
    using cuda::std::is_floating_point;
    using cuda::std::enable_if;
    using cuda::std::conditional;
  }

  // NVRTC uses asm/volatile instead of __asm__/__volatile__ (gcc extension).
  #ifndef __asm__
  #define __asm__ asm
  #endif
  #ifndef __volatile__
  #define __volatile__ volatile
  #endif
#else
  #include <cstdint>
  #include <type_traits>
  #include <cuda.h>
#endif

#if (((__CUDACC_VER_MAJOR__ == 11) && (__CUDACC_VER_MINOR__ >= 4)) || \
     (__CUDACC_VER_MAJOR__ > 11))
#define TVM_ENABLE_L2_PREFETCH 1
#else
#define TVM_ENABLE_L2_PREFETCH 0
#endif

#ifdef _WIN32
  using uint = unsigned int;
  using uchar = unsigned char;
  using ushort = unsigned short;
  using int64_t = long long;
  using uint64_t = unsigned long long;
#else
  #define uint unsigned int
  #define uchar unsigned char
  #define ushort unsigned short
#endif
extern "C" __global__ void __launch_bounds__(256) reduce_cols_kernel(float* __restrict__ a_ptr, float* __restrict__ a_red_ptr);
extern "C" __global__ void __launch_bounds__(256) reduce_cols_kernel(float* __restrict__ a_ptr, float* __restrict__ a_red_ptr) {
  alignas(64) float a_red_rf_local_ptr[1];
  __shared__ alignas(64) float red_buf0_ptr[256];
  a_red_rf_local_ptr[0] = 0x0p+0f/*0.000000e+00*/;
  for (int ax1_fused_0 = 0; ax1_fused_0 < 8; ++ax1_fused_0) {
    a_red_rf_local_ptr[0] = (a_red_rf_local_ptr[0] + a_ptr[(((ax1_fused_0 * 256) + (((int)threadIdx.y) * 16)) + ((int)threadIdx.x))]);
  }
  __syncthreads();
  ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = a_red_rf_local_ptr[0];
  __syncthreads();
  if (((int)threadIdx.y) < 8) {
    ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = (((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] + ((volatile float*)red_buf0_ptr)[(((((int)threadIdx.x) * 16) + ((int)threadIdx.y)) + 8)]);
  }
  __syncthreads();
  if (((int)threadIdx.y) < 4) {
    ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = (((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] + ((volatile float*)red_buf0_ptr)[(((((int)threadIdx.x) * 16) + ((int)threadIdx.y)) + 4)]);
  }
  __syncthreads();
  if (((int)threadIdx.y) < 2) {
    ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = (((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] + ((volatile float*)red_buf0_ptr)[(((((int)threadIdx.x) * 16) + ((int)threadIdx.y)) + 2)]);
  }
  __syncthreads();
  if (((int)threadIdx.y) < 1) {
    ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = (((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] + ((volatile float*)red_buf0_ptr)[(((((int)threadIdx.x) * 16) + ((int)threadIdx.y)) + 1)]);
  }
  __syncthreads();
  if (((int)threadIdx.y) == 0) {
    a_red_ptr[((int)threadIdx.x)] = ((volatile float*)red_buf0_ptr)[(((int)threadIdx.x) * 16)];
  }
}

