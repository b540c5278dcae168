typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(16) r_16_16_2(int* data0_16, float* data1_512, float* data2_16) {
  int buf0[1];
  int buf1[1];
  __shared__ __align__(16) int buf2[16];
  int gidx0 = blockIdx.x; /* 16 */
  float val0 = (*(data2_16+gidx0));
  int lidx0 = threadIdx.x; /* 16 */
  *(buf0+0) = -2147483648;
  for (int Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    int val1 = (*(buf0+0));
    int alu1 = ((lidx0<<1)+Ridx0);
    float val2 = (*(data1_512+(alu1+(gidx0<<5))));
    int alu2 = (((int)((val2==val0)))*(32-alu1));
    int alu3 = ((val1<alu2)?alu2:val1);
    *(buf0+0) = alu3;
  }
  *(buf2+lidx0) = (*(buf0+0));
  __syncthreads();
  *(buf1+0) = -2147483648;
  for (int Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    int val3 = (*(buf2+Ridx102));
    int val4 = (*(buf1+0));
    int alu9 = ((val4<val3)?val3:val4);
    *(buf1+0) = alu9;
  }
  if ((lidx0==0)) {
    *(data0_16+gidx0) = (32-(*(buf1+0)));
  }
}