fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
@group(0) @binding(1)var<storage,read_write>data0_256:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_192:array<f32>;
@group(0) @binding(3)var<storage,read_write>data2_108:array<f32>;
@compute @workgroup_size(2,8,8) fn r_2_2_8_8_3_3_3(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var buf0: array<f32,1>;
  var gidx0 = i32(gindex.x); /* 2 */
  var lidx0 = i32(lindex.x); /* 2 */
  var lidx1 = i32(lindex.y); /* 8 */
  var lidx2 = i32(lindex.z); /* 8 */
  var alu0 = (lidx2+bitcast<i32>((bitcast<u32>(lidx1)<<3u)));
  var alu1 = (lidx1<7);
  var alu2 = (lidx2<7);
  var alu3 = (0<lidx1);
  var alu4 = (0<lidx2);
  buf0[0] = 0.0f;
  for (var Ridx0 = 0; Ridx0 < 3; Ridx0++) {
    var alu6 = (alu0+bitcast<i32>((bitcast<u32>(Ridx0)<<6u)));
    var val0 = data1_192[alu6];
    var val1 = select(0.0f, data1_192[(alu6+-9)], (alu4&alu3));
    var val2 = select(0.0f, data1_192[(alu6+-8)], alu3);
    var val3 = select(0.0f, data1_192[(alu6+-7)], (alu2&alu3));
    var val4 = select(0.0f, data1_192[(alu6+-1)], alu4);
    var val5 = select(0.0f, data1_192[(alu6+1)], alu2);
    var val6 = select(0.0f, data1_192[(alu6+7)], (alu4&alu1));
    var val7 = select(0.0f, data1_192[(alu6+8)], alu1);
    var val8 = select(0.0f, data1_192[(alu6+9)], (alu2&alu1));
    var alu7 = ((gidx0*54)+(lidx0*27)+(Ridx0*9));
    var val9 = data2_108[(alu7+1)];
    var val10 = data2_108[(alu7+2)];
    var val11 = data2_108[(alu7+3)];
    var val12 = data2_108[(alu7+4)];
    var val13 = data2_108[(alu7+5)];
    var val14 = data2_108[(alu7+6)];
    var val15 = data2_108[(alu7+7)];
    var val16 = data2_108[(alu7+8)];
    var val17 = data2_108[alu7];
    buf0[0] = (buf0[0]+(val1*val17)+(val2*val9)+(val3*val10)+(val4*val11)+(val0*val12)+(val5*val13)+(val6*val14)+(val7*val15)+(val8*val16));
  }
  data0_256[(alu0+bitcast<i32>((bitcast<u32>(gidx0)<<7u))+bitcast<i32>((bitcast<u32>(lidx0)<<6u)))] = buf0[0];
}