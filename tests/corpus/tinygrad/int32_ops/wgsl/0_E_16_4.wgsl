fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
@group(0) @binding(1)var<storage,read_write>data0_64:array<i32>;
@group(0) @binding(2)var<storage,read_write>data1_64:array<i32>;
@group(0) @binding(3)var<storage,read_write>data2_64:array<i32>;
@compute @workgroup_size(16) fn E_16_4(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var lidx0 = i32(lindex.x); /* 16 */
  var cast0 = bitcast<i32>((bitcast<u32>(lidx0)<<2u));
  var val0 = data1_64[cast0];
  var alu0 = (cast0+1);
  var val1 = data1_64[alu0];
  var alu1 = (cast0+2);
  var val2 = data1_64[alu1];
  var alu2 = (cast0+3);
  var val3 = data1_64[alu2];
  var val4 = data2_64[cast0];
  var val5 = data2_64[alu0];
  var val6 = data2_64[alu1];
  var val7 = data2_64[alu2];
  var alu3 = ((val0*3)+val4);
  var alu4 = ((val1*3)+val5);
  var alu5 = ((val2*3)+val6);
  var alu6 = ((val3*3)+val7);
  var alu7 = select(alu3,val4,(alu3<val4));
  var alu8 = select(alu4,val5,(alu4<val5));
  var alu9 = select(alu5,val6,(alu5<val6));
  var alu10 = select(alu6,val7,(alu6<val7));
  data0_64[cast0] = alu7;
  data0_64[alu0] = alu8;
  data0_64[alu1] = alu9;
  data0_64[alu2] = alu10;
}