fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
@group(0) @binding(1)var<storage,read_write>data0_32:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_32:array<f32>;
@group(0) @binding(3)var<storage,read_write>data2_8:array<f32>;
@compute @workgroup_size(4,2) fn E_4_2_4(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var lidx0 = i32(lindex.x); /* 4 */
  var lidx1 = i32(lindex.y); /* 2 */
  var cast0 = bitcast<i32>((bitcast<u32>(lidx1)<<2u));
  var alu0 = (bitcast<i32>((bitcast<u32>(lidx0)<<3u))+cast0);
  var val0 = data1_32[alu0];
  var alu1 = (alu0+1);
  var val1 = data1_32[alu1];
  var alu2 = (alu0+2);
  var val2 = data1_32[alu2];
  var alu3 = (alu0+3);
  var val3 = data1_32[alu3];
  var val4 = data2_8[cast0];
  var val5 = data2_8[(cast0+1)];
  var val6 = data2_8[(cast0+2)];
  var val7 = data2_8[(cast0+3)];
  data0_32[alu0] = ((val0+val4)*2.0f);
  data0_32[alu1] = ((val1+val5)*2.0f);
  data0_32[alu2] = ((val2+val6)*2.0f);
  data0_32[alu3] = ((val3+val7)*2.0f);
}