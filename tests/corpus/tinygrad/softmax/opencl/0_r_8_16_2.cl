__kernel void r_8_16_2(__global float* data0_8, __global float* data1_256) {
  float buf0[1];
  float buf1[1];
  __attribute__ ((aligned (16))) __local float buf2[16];
  int gidx0 = get_group_id(0); /* 8 */
  int lidx0 = get_local_id(0); /* 16 */
  *(buf0+0) = ((float)(-INFINITY));
  for (int Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    float val0 = (*(data1_256+((lidx0<<1)+Ridx0+(gidx0<<5))));
    float val1 = (*(buf0+0));
    float alu1 = ((val1<val0)?val0:val1);
    *(buf0+0) = alu1;
  }
  *(buf2+lidx0) = (*(buf0+0));
  barrier(CLK_LOCAL_MEM_FENCE);
  *(buf1+0) = ((float)(-INFINITY));
  for (int Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    float val2 = (*(buf2+Ridx102));
    float val3 = (*(buf1+0));
    float alu7 = ((val3<val2)?val2:val3);
    *(buf1+0) = alu7;
  }
  if ((lidx0==0)) {
    *(data0_8+gidx0) = (*(buf1+0));
  }
}