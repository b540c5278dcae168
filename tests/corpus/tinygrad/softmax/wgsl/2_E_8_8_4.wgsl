fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
@group(0) @binding(1)var<storage,read_write>data0_256:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_256:array<f32>;
@group(0) @binding(3)var<storage,read_write>data2_8:array<f32>;
@group(0) @binding(4)var<storage,read_write>data3_8:array<f32>;
@compute @workgroup_size(8,8) fn E_8_8_4(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var lidx0 = i32(lindex.x); /* 8 */
  var lidx1 = i32(lindex.y); /* 8 */
  var alu0 = (bitcast<i32>((bitcast<u32>(lidx0)<<5u))+bitcast<i32>((bitcast<u32>(lidx1)<<2u)));
  var val0 = data1_256[alu0];
  var alu1 = (alu0+1);
  var val1 = data1_256[alu1];
  var alu2 = (alu0+2);
  var val2 = data1_256[alu2];
  var alu3 = (alu0+3);
  var val3 = data1_256[alu3];
  var val4 = data2_8[lidx0];
  var val5 = data3_8[lidx0];
  var alu4 = (1/val5);
  data0_256[alu0] = (exp2(((val0-val4)*1.4426950216293335f))*alu4);
  data0_256[alu1] = (exp2(((val1-val4)*1.4426950216293335f))*alu4);
  data0_256[alu2] = (exp2(((val2-val4)*1.4426950216293335f))*alu4);
  data0_256[alu3] = (exp2(((val3-val4)*1.4426950216293335f))*alu4);
}