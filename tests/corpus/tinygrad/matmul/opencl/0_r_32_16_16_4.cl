__kernel void r_32_16_16_4(__global float* data0_512, __global float* data1_2048, __global float* data2_1024) {
  float buf0[1];
  float buf1[1];
  __attribute__ ((aligned (16))) __local float buf2[16];
  int gidx0 = get_group_id(0); /* 16 */
  int gidx1 = get_group_id(1); /* 32 */
  int lidx0 = get_local_id(0); /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 4; Ridx0++) {
    float val0 = (*(data1_2048+((lidx0<<2)+Ridx0+(gidx1<<6))));
    float val1 = (*(data2_1024+(gidx0+(lidx0<<6)+(Ridx0<<4))));
    *(buf0+0) = ((*(buf0+0))+(val0*val1));
  }
  *(buf2+lidx0) = (*(buf0+0));
  barrier(CLK_LOCAL_MEM_FENCE);
  *(buf1+0) = 0.0f;
  for (int Ridx103 = 0; Ridx103 < 16; Ridx103++) {
    float val2 = (*(buf2+Ridx103));
    *(buf1+0) = ((*(buf1+0))+val2);
  }
  if ((lidx0==0)) {
    *(data0_512+(gidx0+(gidx1<<4))) = (*(buf1+0));
  }
}