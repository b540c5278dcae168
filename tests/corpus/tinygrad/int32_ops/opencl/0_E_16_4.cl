__kernel void E_16_4(__global int* data0_64, __global int* data1_64, __global int* data2_64) {
  int lidx0 = get_local_id(0); /* 16 */
  int alu0 = (lidx0<<2);
  int4 val0 = (*((__global int4*)((data1_64+alu0))));
  int4 val1 = (*((__global int4*)((data2_64+alu0))));
  int alu1 = ((val0.x*3)+val1.x);
  int alu2 = ((val0.y*3)+val1.y);
  int alu3 = ((val0.z*3)+val1.z);
  int alu4 = ((val0.w*3)+val1.w);
  int alu5 = ((alu1<val1.x)?val1.x:alu1);
  int alu6 = ((alu2<val1.y)?val1.y:alu2);
  int alu7 = ((alu3<val1.z)?val1.z:alu3);
  int alu8 = ((alu4<val1.w)?val1.w:alu4);
  *((__global int4*)((data0_64+alu0))) = (int4)(alu5,alu6,alu7,alu8);
}