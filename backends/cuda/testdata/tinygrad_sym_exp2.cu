typedef unsigned int uint;
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F v) { union U { F f; T t; }; U u; u.f = v; return u.t; }
extern "C" __global__ void __launch_bounds__(1) E_n(float* data0_128, float* data1_128, const int data2_) {
  int gidx0 = blockIdx.x; /* n */
  float val0 = (*(data1_128+gidx0));
  *(data0_128+gidx0) = exp2(val0);
}