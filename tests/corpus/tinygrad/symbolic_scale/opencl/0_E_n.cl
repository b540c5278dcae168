__kernel void E_n(__global float* data0_64, __global float* data1_64, const int data2_) {
  int gidx0 = get_group_id(0); /* n */
  float val0 = (*(data1_64+gidx0));
  *(data0_64+gidx0) = (val0*2.0f);
}