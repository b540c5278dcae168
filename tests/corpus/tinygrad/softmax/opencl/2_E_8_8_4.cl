__kernel void E_8_8_4(__global float* data0_256, __global float* data1_256, __global float* data2_8, __global float* data3_8) {
  int lidx0 = get_local_id(0); /* 8 */
  float val0 = (*(data2_8+lidx0));
  float val1 = (*(data3_8+lidx0));
  int lidx1 = get_local_id(1); /* 8 */
  int alu0 = ((lidx0<<5)+(lidx1<<2));
  float4 val2 = (*((__global float4*)((data1_256+alu0))));
  float alu1 = (1/val1);
  *((__global float4*)((data0_256+alu0))) = (float4)((exp2(((val2.x-val0)*1.4426950216293335f))*alu1),(exp2(((val2.y-val0)*1.4426950216293335f))*alu1),(exp2(((val2.z-val0)*1.4426950216293335f))*alu1),(exp2(((val2.w-val0)*1.4426950216293335f))*alu1));
}