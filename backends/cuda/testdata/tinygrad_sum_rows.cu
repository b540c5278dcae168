typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(16) r_64_16_2(float* data0_64, float* data1_2048, float* data2_32) {
  float buf0[1];
  float buf1[1];
  __shared__ __align__(16) float buf2[16];
  int gidx0 = blockIdx.x; /* 64 */
  int lidx0 = threadIdx.x; /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    int alu1 = ((lidx0<<1)+Ridx0);
    float val0 = (*(data1_2048+(alu1+(gidx0<<5))));
    float val1 = (*(data2_32+alu1));
    *(buf0+0) = ((*(buf0+0))+val0+val1);
  }
  *(buf2+lidx0) = (*(buf0+0));
  __syncthreads();
  *(buf1+0) = 0.0f;
  for (int Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    float val2 = (*(buf2+Ridx102));
    *(buf1+0) = ((*(buf1+0))+val2);
  }
  if ((lidx0==0)) {
    *(data0_64+gidx0) = (*(buf1+0));
  }
}