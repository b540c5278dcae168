typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(16) r_16_256(float* data0_1, float* data1_4096) {
  float buf0[1];
  float buf1[1];
  __shared__ __align__(16) float buf2[16];
  int lidx0 = threadIdx.x; /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 256; Ridx0++) {
    float val0 = (*(data1_4096+((lidx0<<8)+Ridx0)));
    *(buf0+0) = ((*(buf0+0))+val0);
  }
  *(buf2+lidx0) = (*(buf0+0));
  __syncthreads();
  *(buf1+0) = 0.0f;
  for (int Ridx101 = 0; Ridx101 < 16; Ridx101++) {
    float val1 = (*(buf2+Ridx101));
    *(buf1+0) = ((*(buf1+0))+val1);
  }
  if ((lidx0==0)) {
    *(data0_1+0) = (*(buf1+0));
  }
}