fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
var<workgroup> buf2: array<f32,16>;
@group(0) @binding(1)var<storage,read_write>data0_8:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_256:array<f32>;
@compute @workgroup_size(16) fn r_8_16_2(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var buf0: array<f32,1>;
  var buf1: array<f32,1>;
  var gidx0 = i32(gindex.x); /* 8 */
  var lidx0 = i32(lindex.x); /* 16 */
  buf0[0] = (f32(-INFINITY));
  for (var Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    var val0 = data1_256[(bitcast<i32>((bitcast<u32>(lidx0)<<1u))+Ridx0+bitcast<i32>((bitcast<u32>(gidx0)<<5u)))];
    var val1 = buf0[0];
    var alu1 = select(val1,val0,(val1<val0));
    buf0[0] = alu1;
  }
  buf2[lidx0] = buf0[0];
  workgroupBarrier();
  buf1[0] = (f32(-INFINITY));
  for (var Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    var val2 = buf2[Ridx102];
    var val3 = buf1[0];
    var alu7 = select(val3,val2,(val3<val2));
    buf1[0] = alu7;
  }
  if ((lidx0==0)) {
    data0_8[gidx0] = buf1[0];
  }
}