fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
@group(0) @binding(1)var<storage,read_write>data0_64:array<atomic<u32>>;
@group(0) @binding(2)var<storage,read_write>data1_64:array<atomic<u32>>;
@group(0) @binding(3)var<storage,read_write>data2_64:array<atomic<u32>>;
@compute @workgroup_size(16) fn E_16_4(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var lidx0 = i32(lindex.x); /* 16 */
  var cast0 = bitcast<i32>((bitcast<u32>(lidx0)<<2u));
  var alu0 = (cast0>>2u);
  var val0 = atomicLoad(&data0_64[alu0]);
  var alu1 = (cast0+1);
  var alu2 = (alu1>>2u);
  var val1 = atomicLoad(&data0_64[alu2]);
  var alu3 = (cast0+2);
  var alu4 = (alu3>>2u);
  var val2 = atomicLoad(&data0_64[alu4]);
  var alu5 = (cast0+3);
  var alu6 = (alu5>>2u);
  var val3 = atomicLoad(&data0_64[alu6]);
  var val4 = atomicLoad(&data1_64[alu0]);
  var val5 = atomicLoad(&data1_64[alu2]);
  var val6 = atomicLoad(&data1_64[alu4]);
  var val7 = atomicLoad(&data1_64[alu6]);
  var val8 = atomicLoad(&data2_64[alu0]);
  var val9 = atomicLoad(&data2_64[alu2]);
  var val10 = atomicLoad(&data2_64[alu4]);
  var val11 = atomicLoad(&data2_64[alu6]);
  var alu7 = (((u32(cast0))&3u)<<3u);
  var alu8 = (((u32(alu1))&3u)<<3u);
  var alu9 = (((u32(alu3))&3u)<<3u);
  var alu10 = (((u32(alu5))&3u)<<3u);
  atomicAnd(&data0_64[alu0],((255u<<alu7)^4294967295u));
    atomicAdd(&data0_64[alu0],((u32((((u32(((val4>>alu7)&255u)))+(u32(((val8>>alu7)&255u))))&255u)))<<alu7));
  atomicAnd(&data0_64[alu2],((255u<<alu8)^4294967295u));
    atomicAdd(&data0_64[alu2],((u32((((u32(((val5>>alu8)&255u)))+(u32(((val9>>alu8)&255u))))&255u)))<<alu8));
  atomicAnd(&data0_64[alu4],((255u<<alu9)^4294967295u));
    atomicAdd(&data0_64[alu4],((u32((((u32(((val6>>alu9)&255u)))+(u32(((val10>>alu9)&255u))))&255u)))<<alu9));
  atomicAnd(&data0_64[alu6],((255u<<alu10)^4294967295u));
    atomicAdd(&data0_64[alu6],((u32((((u32(((val7>>alu10)&255u)))+(u32(((val11>>alu10)&255u))))&255u)))<<alu10));
}