__kernel void E_125_2_4(__global float* data0_1000, __global float* data1_1000, __global float* data2_1000) {
  int gidx0 = get_group_id(0); /* 125 */
  int lidx0 = get_local_id(0); /* 2 */
  int alu0 = ((gidx0<<3)+(lidx0<<2));
  float4 val0 = (*((__global float4*)((data1_1000+alu0))));
  float4 val1 = (*((__global float4*)((data2_1000+alu0))));
  *((__global float4*)((data0_1000+alu0))) = (float4)((val0.x+val1.x),(val0.y+val1.y),(val0.z+val1.z),(val0.w+val1.w));
}