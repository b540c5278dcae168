__kernel void r_8_16_2(__global ushort* data0_8, __global ushort* data1_256) {
  float buf0[1];
  float buf1[1];
  __attribute__ ((aligned (16))) __local float buf2[16];
  int gidx0 = get_group_id(0); /* 8 */
  int lidx0 = get_local_id(0); /* 16 */
  *(buf0+0) = 0.0f;
  for (int Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    ushort val0 = (*(data1_256+((lidx0<<1)+Ridx0+(gidx0<<5))));
    uint cast0 = ((uint)((val0&((ushort)(32767u)))));
    uint alu1 = (cast0<<13u);
    uint alu2 = (cast0>>10u);
    uint alu3 = ((alu2==31u)?(alu1|2139095040u):(alu1+939524096u));
    uint alu4 = ((alu2==0u)?0u:alu3);
    *(buf0+0) = ((*(buf0+0))+as_float((uint)(((((uint)((val0&((ushort)(32768u)))))<<16u)|alu4))));
  }
  *(buf2+lidx0) = (*(buf0+0));
  barrier(CLK_LOCAL_MEM_FENCE);
  *(buf1+0) = 0.0f;
  for (int Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    float val1 = (*(buf2+Ridx102));
    *(buf1+0) = ((*(buf1+0))+val1);
  }
  float val2 = (*(buf1+0));
  float alu12 = ((65504.0f<val2)?((float)(INFINITY)):val2);
  float alu13 = ((val2<-65504.0f)?((float)(-INFINITY)):alu12);
  float alu14 = ((val2!=val2)?val2:alu13);
  float alu15 = ((65504.0f<alu14)?((float)(INFINITY)):alu14);
  float alu16 = ((alu14<-65504.0f)?((float)(-INFINITY)):alu15);
  float alu17 = ((alu14!=alu14)?alu14:alu16);
  uint cast1 = as_uint((float)(alu17));
  uint alu18 = (cast1&2147483647u);
  uint alu19 = (alu18>>13u);
  uint alu20 = ((cast1>>16u)&32768u);
  uint alu21 = ((cast1>>23u)&255u);
  ushort alu22 = ((alu21<113u)?((ushort)(0u)):((ushort)((alu19+((alu18>>12u)&1u&(((uint)(((alu18&4095u)!=0u)))|(alu19&1u)))+4294852608u))));
  ushort alu23 = ((alu21==255u)?((ushort)((alu20|(alu19&1023u)|31744u))):(((ushort)(alu20))|alu22));
  if ((lidx0==0)) {
    *(data0_8+gidx0) = alu23;
  }
}