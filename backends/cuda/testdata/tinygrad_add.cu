typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(2) E_125_2_4(float* data0_1000, float* data1_1000, float* data2_1000) {
  int gidx0 = blockIdx.x; /* 125 */
  int lidx0 = threadIdx.x; /* 2 */
  int alu0 = ((gidx0<<3)+(lidx0<<2));
  float4 val0 = (*((float4*)((data1_1000+alu0))));
  float4 val1 = (*((float4*)((data2_1000+alu0))));
  *((float4*)((data0_1000+alu0))) = make_float4((val0.x+val1.x),(val0.y+val1.y),(val0.z+val1.z),(val0.w+val1.w));
}