__kernel void r_2_2_8_8_3_3_3(__global float* data0_256, __global float* data1_192, __global float* data2_108) {
  float buf0[1];
  int gidx0 = get_group_id(0); /* 2 */
  int lidx0 = get_local_id(0); /* 2 */
  int lidx1 = get_local_id(1); /* 8 */
  int lidx2 = get_local_id(2); /* 8 */
  int alu0 = (lidx2+(lidx1<<3));
  bool alu1 = (lidx1<7);
  bool alu2 = (lidx2<7);
  bool alu3 = (0<lidx1);
  bool alu4 = (0<lidx2);
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 3; Ridx0++) {
    int alu6 = (alu0+(Ridx0<<6));
    float val0 = (*(data1_192+alu6));
    float val1 = ((alu4&alu3)?*(data1_192+(alu6+-9)):0.0f);
    float val2 = (alu3?*(data1_192+(alu6+-8)):0.0f);
    float val3 = ((alu2&alu3)?*(data1_192+(alu6+-7)):0.0f);
    float val4 = (alu4?*(data1_192+(alu6+-1)):0.0f);
    float val5 = (alu2?*(data1_192+(alu6+1)):0.0f);
    float val6 = ((alu4&alu1)?*(data1_192+(alu6+7)):0.0f);
    float val7 = (alu1?*(data1_192+(alu6+8)):0.0f);
    float val8 = ((alu2&alu1)?*(data1_192+(alu6+9)):0.0f);
    int alu7 = ((gidx0*54)+(lidx0*27)+(Ridx0*9));
    float val9 = (*(data2_108+(alu7+1)));
    float val10 = (*(data2_108+(alu7+2)));
    float val11 = (*(data2_108+(alu7+3)));
    float val12 = (*(data2_108+(alu7+4)));
    float val13 = (*(data2_108+(alu7+5)));
    float val14 = (*(data2_108+(alu7+6)));
    float val15 = (*(data2_108+(alu7+7)));
    float val16 = (*(data2_108+(alu7+8)));
    float val17 = (*(data2_108+alu7));
    *(buf0+0) = ((*(buf0+0))+(val1*val17)+(val2*val9)+(val3*val10)+(val4*val11)+(val0*val12)+(val5*val13)+(val6*val14)+(val7*val15)+(val8*val16));
  }
  *(data0_256+(alu0+(gidx0<<7)+(lidx0<<6))) = (*(buf0+0));
}