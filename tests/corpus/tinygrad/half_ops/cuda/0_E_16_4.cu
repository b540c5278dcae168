typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
#include <cuda_fp16.h>
struct __align__(8) half4 { half x, y, z, w; }; __device__ half4 make_half4(half x, half y, half z, half w) { half4 r={x, y, z, w}; return r; }
extern "C" __global__ void __launch_bounds__(16) E_16_4(half* data0_64, half* data1_64) {
  int lidx0 = threadIdx.x; /* 16 */
  int alu0 = (lidx0<<2);
  half4 val0 = (*((half4*)((data1_64+alu0))));
  *((half4*)((data0_64+alu0))) = make_half4(((val0.x*((half)(2.0f)))+((half)(1.0f))),((val0.y*((half)(2.0f)))+((half)(1.0f))),((val0.z*((half)(2.0f)))+((half)(1.0f))),((val0.w*((half)(2.0f)))+((half)(1.0f))));
}