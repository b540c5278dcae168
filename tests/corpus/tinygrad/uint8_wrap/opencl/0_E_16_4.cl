__kernel void E_16_4(__global uchar* data0_64, __global uchar* data1_64, __global uchar* data2_64) {
  int lidx0 = get_local_id(0); /* 16 */
  int alu0 = (lidx0<<2);
  int alu1 = (alu0+1);
  uchar val0 = (*(data1_64+alu1));
  int alu2 = (alu0+2);
  uchar val1 = (*(data1_64+alu2));
  int alu3 = (alu0+3);
  uchar val2 = (*(data1_64+alu3));
  uchar val3 = (*(data1_64+alu0));
  uchar val4 = (*(data2_64+alu1));
  uchar val5 = (*(data2_64+alu2));
  uchar val6 = (*(data2_64+alu3));
  uchar val7 = (*(data2_64+alu0));
  *(data0_64+alu1) = (val0+val4);
  *(data0_64+alu2) = (val1+val5);
  *(data0_64+alu3) = (val2+val6);
  *(data0_64+alu0) = (val3+val7);
}