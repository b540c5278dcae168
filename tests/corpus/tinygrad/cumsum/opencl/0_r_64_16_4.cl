__kernel void r_64_16_4(__global float* data0_64, __global float* data1_64) {
  float buf0[1];
  float buf1[1];
  __attribute__ ((aligned (16))) __local float buf2[16];
  int gidx0 = get_group_id(0); /* 64 */
  int lidx0 = get_local_id(0); /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 4; Ridx0++) {
    int alu1 = (gidx0+(lidx0<<2)+Ridx0);
    float val0 = ((62<alu1)?*(data1_64+(alu1+-63)):0.0f);
    *(buf0+0) = ((*(buf0+0))+val0);
  }
  *(buf2+lidx0) = (*(buf0+0));
  barrier(CLK_LOCAL_MEM_FENCE);
  *(buf1+0) = 0.0f;
  for (int Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    float val1 = (*(buf2+Ridx102));
    *(buf1+0) = ((*(buf1+0))+val1);
  }
  if ((lidx0==0)) {
    *(data0_64+gidx0) = (*(buf1+0));
  }
}