typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(32) r_32_32_4_8(float* data0_4096, float* data1_32768) {
  int gidx0 = blockIdx.x; /* 32 */
  int lidx0 = threadIdx.x; /* 32 */
  int alu0 = ((gidx0<<10)+(lidx0<<5));
  float4 val0 = (*((float4*)((data1_32768+(alu0+4)))));
  float4 val1 = (*((float4*)((data1_32768+(alu0+8)))));
  float4 val2 = (*((float4*)((data1_32768+(alu0+12)))));
  float4 val3 = (*((float4*)((data1_32768+(alu0+16)))));
  float4 val4 = (*((float4*)((data1_32768+(alu0+20)))));
  float4 val5 = (*((float4*)((data1_32768+(alu0+24)))));
  float4 val6 = (*((float4*)((data1_32768+(alu0+28)))));
  float4 val7 = (*((float4*)((data1_32768+alu0))));
  *((float4*)((data0_4096+((gidx0<<7)+(lidx0<<2))))) = make_float4((val7.x+val7.y+val7.z+val7.w+val0.x+val0.y+val0.z+val0.w),(val1.x+val1.y+val1.z+val1.w+val2.x+val2.y+val2.z+val2.w),(val3.x+val3.y+val3.z+val3.w+val4.x+val4.y+val4.z+val4.w),(val5.x+val5.y+val5.z+val5.w+val6.x+val6.y+val6.z+val6.w));
}