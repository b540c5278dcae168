__kernel void r_64_16_2(__global float* data0_64, __global float* data1_2048, __global float* data2_32) {
  float buf0[1];
  float buf1[1];
  __attribute__ ((aligned (16))) __local float buf2[16];
  int gidx0 = get_group_id(0); /* 64 */
  int lidx0 = get_local_id(0); /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    int alu1 = ((lidx0<<1)+Ridx0);
    float val0 = (*(data1_2048+(alu1+(gidx0<<5))));
    float val1 = (*(data2_32+alu1));
    *(buf0+0) = ((*(buf0+0))+val0+val1);
  }
  *(buf2+lidx0) = (*(buf0+0));
  barrier(CLK_LOCAL_MEM_FENCE);
  *(buf1+0) = 0.0f;
  for (int Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    float val2 = (*(buf2+Ridx102));
    *(buf1+0) = ((*(buf1+0))+val2);
  }
  if ((lidx0==0)) {
    *(data0_64+gidx0) = (*(buf1+0));
  }
}