fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
var<workgroup> buf2: array<i32,16>;
@group(0) @binding(1)var<storage,read_write>data0_16:array<i32>;
@group(0) @binding(2)var<storage,read_write>data1_512:array<f32>;
@group(0) @binding(3)var<storage,read_write>data2_16:array<f32>;
@compute @workgroup_size(16) fn r_16_16_2(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var buf0: array<i32,1>;
  var buf1: array<i32,1>;
  var gidx0 = i32(gindex.x); /* 16 */
  var val0 = data2_16[gidx0];
  var lidx0 = i32(lindex.x); /* 16 */
  buf0[0] = -2147483648;
  for (var Ridx0 = 0; Ridx0 < 2; Ridx0++) {
    var val1 = buf0[0];
    var alu1 = (bitcast<i32>((bitcast<u32>(lidx0)<<1u))+Ridx0);
    var val2 = data1_512[(alu1+bitcast<i32>((bitcast<u32>(gidx0)<<5u)))];
    var alu2 = ((i32((val2==val0)))*(32-alu1));
    var alu3 = select(val1,alu2,(val1<alu2));
    buf0[0] = alu3;
  }
  buf2[lidx0] = buf0[0];
  workgroupBarrier();
  buf1[0] = -2147483648;
  for (var Ridx102 = 0; Ridx102 < 16; Ridx102++) {
    var val3 = buf2[Ridx102];
    var val4 = buf1[0];
    var alu9 = select(val4,val3,(val4<val3));
    buf1[0] = alu9;
  }
  if ((lidx0==0)) {
    data0_16[gidx0] = (32-buf1[0]);
  }
}