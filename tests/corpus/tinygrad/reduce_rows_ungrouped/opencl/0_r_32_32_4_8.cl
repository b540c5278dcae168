__kernel void r_32_32_4_8(__global float* data0_4096, __global float* data1_32768) {
  int gidx0 = get_group_id(0); /* 32 */
  int lidx0 = get_local_id(0); /* 32 */
  int alu0 = ((gidx0<<10)+(lidx0<<5));
  float4 val0 = (*((__global float4*)((data1_32768+(alu0+4)))));
  float4 val1 = (*((__global float4*)((data1_32768+(alu0+8)))));
  float4 val2 = (*((__global float4*)((data1_32768+(alu0+12)))));
  float4 val3 = (*((__global float4*)((data1_32768+(alu0+16)))));
  float4 val4 = (*((__global float4*)((data1_32768+(alu0+20)))));
  float4 val5 = (*((__global float4*)((data1_32768+(alu0+24)))));
  float4 val6 = (*((__global float4*)((data1_32768+(alu0+28)))));
  float4 val7 = (*((__global float4*)((data1_32768+alu0))));
  *((__global float4*)((data0_4096+((gidx0<<7)+(lidx0<<2))))) = (float4)((val7.x+val7.y+val7.z+val7.w+val0.x+val0.y+val0.z+val0.w),(val1.x+val1.y+val1.z+val1.w+val2.x+val2.y+val2.z+val2.w),(val3.x+val3.y+val3.z+val3.w+val4.x+val4.y+val4.z+val4.w),(val5.x+val5.y+val5.z+val5.w+val6.x+val6.y+val6.z+val6.w));
}