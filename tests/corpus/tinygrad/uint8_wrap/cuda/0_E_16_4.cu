typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(16) E_16_4(unsigned char* data0_64, unsigned char* data1_64, unsigned char* data2_64) {
  int lidx0 = threadIdx.x; /* 16 */
  int alu0 = (lidx0<<2);
  int alu1 = (alu0+1);
  unsigned char val0 = (*(data1_64+alu1));
  int alu2 = (alu0+2);
  unsigned char val1 = (*(data1_64+alu2));
  int alu3 = (alu0+3);
  unsigned char val2 = (*(data1_64+alu3));
  unsigned char val3 = (*(data1_64+alu0));
  unsigned char val4 = (*(data2_64+alu1));
  unsigned char val5 = (*(data2_64+alu2));
  unsigned char val6 = (*(data2_64+alu3));
  unsigned char val7 = (*(data2_64+alu0));
  *(data0_64+alu1) = (val0+val4);
  *(data0_64+alu2) = (val1+val5);
  *(data0_64+alu3) = (val2+val6);
  *(data0_64+alu0) = (val3+val7);
}