__kernel void E_n(__global float* data0_128, __global float* data1_128, const int data2_) {
  int gidx0 = get_group_id(0); /* n */
  float val0 = (*(data1_128+gidx0));
  *(data0_128+gidx0) = exp2(val0);
}