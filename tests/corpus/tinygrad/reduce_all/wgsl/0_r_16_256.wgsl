fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
var<workgroup> buf2: array<f32,16>;
@group(0) @binding(1)var<storage,read_write>data0_1:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_4096:array<f32>;
@compute @workgroup_size(16) fn r_16_256(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var buf0: array<f32,1>;
  var buf1: array<f32,1>;
  var lidx0 = i32(lindex.x); /* 16 */
  buf0[0] = 0.0f;
  for (var Ridx0 = 0; Ridx0 < 256; Ridx0++) {
    var val0 = data1_4096[(bitcast<i32>((bitcast<u32>(lidx0)<<8u))+Ridx0)];
    buf0[0] = (buf0[0]+val0);
  }
  buf2[lidx0] = buf0[0];
  workgroupBarrier();
  buf1[0] = 0.0f;
  for (var Ridx101 = 0; Ridx101 < 16; Ridx101++) {
    var val1 = buf2[Ridx101];
    buf1[0] = (buf1[0]+val1);
  }
  if ((lidx0==0)) {
    data0_1[0] = buf1[0];
  }
}