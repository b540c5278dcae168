typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(8) E_4_2_4(float* data0_32, float* data1_32, float* data2_8) {
  int lidx0 = threadIdx.x; /* 4 */
  int lidx1 = threadIdx.y; /* 2 */
  int alu0 = (lidx1<<2);
  int alu1 = ((lidx0<<3)+alu0);
  float4 val0 = (*((float4*)((data1_32+alu1))));
  float4 val1 = (*((float4*)((data2_8+alu0))));
  *((float4*)((data0_32+alu1))) = make_float4(((val0.x+val1.x)*2.0f),((val0.y+val1.y)*2.0f),((val0.z+val1.z)*2.0f),((val0.w+val1.w)*2.0f));
}