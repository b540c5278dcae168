__kernel void E_4_2_4(__global float* data0_32, __global float* data1_32, __global float* data2_8) {
  int lidx0 = get_local_id(0); /* 4 */
  int lidx1 = get_local_id(1); /* 2 */
  int alu0 = (lidx1<<2);
  int alu1 = ((lidx0<<3)+alu0);
  float4 val0 = (*((__global float4*)((data1_32+alu1))));
  float4 val1 = (*((__global float4*)((data2_8+alu0))));
  *((__global float4*)((data0_32+alu1))) = (float4)(((val0.x+val1.x)*2.0f),((val0.y+val1.y)*2.0f),((val0.z+val1.z)*2.0f),((val0.w+val1.w)*2.0f));
}