__kernel void r_16_256(__global float* data0_1, __global float* data1_4096) {
  float buf0[1];
  float buf1[1];
  __attribute__ ((aligned (16))) __local float buf2[16];
  int lidx0 = get_local_id(0); /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 256; Ridx0++) {
    float val0 = (*(data1_4096+((lidx0<<8)+Ridx0)));
    *(buf0+0) = ((*(buf0+0))+val0);
  }
  *(buf2+lidx0) = (*(buf0+0));
  barrier(CLK_LOCAL_MEM_FENCE);
  *(buf1+0) = 0.0f;
  for (int Ridx101 = 0; Ridx101 < 16; Ridx101++) {
    float val1 = (*(buf2+Ridx101));
    *(buf1+0) = ((*(buf1+0))+val1);
  }
  if ((lidx0==0)) {
    *(data0_1+0) = (*(buf1+0));
  }
}