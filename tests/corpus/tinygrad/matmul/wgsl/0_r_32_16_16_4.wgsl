fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
var<workgroup> buf2: array<f32,16>;
@group(0) @binding(1)var<storage,read_write>data0_512:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_2048:array<f32>;
@group(0) @binding(3)var<storage,read_write>data2_1024:array<f32>;
@compute @workgroup_size(16) fn r_32_16_16_4(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var buf0: array<f32,1>;
  var buf1: array<f32,1>;
  var gidx0 = i32(gindex.x); /* 16 */
  var gidx1 = i32(gindex.y); /* 32 */
  var lidx0 = i32(lindex.x); /* 16 */
  var cast0 = bitcast<u32>(gidx1);
  var cast1 = bitcast<u32>(lidx0);
  buf0[0] = 0.0f;
  for (var Ridx0 = 0; Ridx0 < 4; Ridx0++) {
    var val0 = data1_2048[(bitcast<i32>((cast1<<2u))+Ridx0+bitcast<i32>((cast0<<6u)))];
    var val1 = data2_1024[(gidx0+bitcast<i32>((cast1<<6u))+bitcast<i32>((bitcast<u32>(Ridx0)<<4u)))];
    buf0[0] = (buf0[0]+(val0*val1));
  }
  buf2[lidx0] = buf0[0];
  workgroupBarrier();
  buf1[0] = 0.0f;
  for (var Ridx103 = 0; Ridx103 < 16; Ridx103++) {
    var val2 = buf2[Ridx103];
    buf1[0] = (buf1[0]+val2);
  }
  if ((lidx0==0)) {
    data0_512[(gidx0+bitcast<i32>((cast0<<4u)))] = buf1[0];
  }
}