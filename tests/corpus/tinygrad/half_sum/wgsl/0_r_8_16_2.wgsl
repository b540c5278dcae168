fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
var<workgroup> buf2: array<f32,16>;
@group(0) @binding(1)var<storage,read_write>data0_8:array<atomic<u32>>;
@group(0) @binding(2)var<storage,read_write>data1_256:array<atomic<u32>>;
@compute @workgroup_size(16) fn r_8_16_2(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var buf0: array<f32,1>;
  var buf1: array<f32,1>;
  var gidx0 = i32(gindex.x); /* 8 */
  var lidx0 = i32(lindex.x); /* 16 */
  buf0[0] = 0.0f;
  for (var Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    var alu1 = (bitcast<i32>((bitcast<u32>(lidx0)<<1u))+Ridx0+bitcast<i32>((bitcast<u32>(gidx0)<<5u)));
    var val0 = atomicLoad(&data1_256[(alu1>>1u)]);
    var cast0 = (u32(((val0>>(((u32(alu1))&1u)<<4u))&65535u)));
    var cast1 = (u32((cast0&32767u)));
    var alu2 = (cast1<<13u);
    var alu3 = (cast1>>10u);
    var alu4 = select((alu2+939524096u),(alu2|2139095040u),(alu3==31u));
    var alu5 = select(alu4,0u,(alu3==0u));
    buf0[0] = (buf0[0]+bitcast<f32>((((u32((cast0&32768u)))<<16u)|alu5)));
  }
  buf2[lidx0] = buf0[0];
  workgroupBarrier();
  buf1[0] = 0.0f;
  for (var Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    var val1 = buf2[Ridx102];
    buf1[0] = (buf1[0]+val1);
  }
  var alu13 = (lidx0==0);
  var val2 = select(0u, atomicLoad(&data0_8[(gidx0>>1u)]), alu13);
  var val3 = buf1[0];
  var alu14 = select(val3,(f32(INFINITY)),(65504.0f<val3));
  var alu15 = select(alu14,(f32(-INFINITY)),(val3<-65504.0f));
  var alu16 = select(alu15,val3,(2139095040u<(bitcast<u32>(val3)&2147483647u)));
  var alu17 = select(alu16,(f32(INFINITY)),(65504.0f<alu16));
  var alu18 = select(alu17,(f32(-INFINITY)),(alu16<-65504.0f));
  var alu19 = select(alu18,alu16,(2139095040u<(bitcast<u32>(alu16)&2147483647u)));
  var cast2 = bitcast<u32>(alu19);
  var alu20 = (cast2&2147483647u);
  var alu21 = (alu20>>13u);
  var alu22 = ((cast2>>16u)&32768u);
  var alu23 = ((cast2>>23u)&255u);
  var alu24 = select((u32((alu21+((alu20>>12u)&1u&((u32(((alu20&4095u)!=0u)))|(alu21&1u)))+bitcast<u32>(-114688)))),0u,(alu23<113u));
  var alu25 = select(((u32(alu22))|alu24),(u32((alu22|(alu21&1023u)|31744u))),(alu23==255u));
  var alu26 = (((u32(gidx0))&1u)<<4u);
  if (alu13) {
    atomicAnd(&data0_8[(gidx0>>1u)],((65535u<<alu26)^4294967295u));
      atomicAdd(&data0_8[(gidx0>>1u)],((u32((alu25&65535u)))<<alu26));
  }
}