fn nan() -> f32 { let bits = 0xffffffffu; return bitcast<f32>(bits); }
@group(0) @binding(0)
var<uniform> INFINITY : f32;
@group(0) @binding(1)var<storage,read_write>data0_4096:array<f32>;
@group(0) @binding(2)var<storage,read_write>data1_32768:array<f32>;
@compute @workgroup_size(32) fn r_32_32_4_8(@builtin(workgroup_id) gindex: vec3<u32>,@builtin(local_invocation_id) lindex: vec3<u32>) {
  var gidx0 = i32(gindex.x); /* 32 */
  var lidx0 = i32(lindex.x); /* 32 */
  var cast0 = bitcast<u32>(gidx0);
  var cast1 = bitcast<u32>(lidx0);
  var alu0 = (bitcast<i32>((cast0<<10u))+bitcast<i32>((cast1<<5u)));
  var val0 = data1_32768[alu0];
  var val1 = data1_32768[(alu0+1)];
  var val2 = data1_32768[(alu0+2)];
  var val3 = data1_32768[(alu0+3)];
  var val4 = data1_32768[(alu0+4)];
  var val5 = data1_32768[(alu0+5)];
  var val6 = data1_32768[(alu0+6)];
  var val7 = data1_32768[(alu0+7)];
  var val8 = data1_32768[(alu0+8)];
  var val9 = data1_32768[(alu0+9)];
  var val10 = data1_32768[(alu0+10)];
  var val11 = data1_32768[(alu0+11)];
  var val12 = data1_32768[(alu0+12)];
  var val13 = data1_32768[(alu0+13)];
  var val14 = data1_32768[(alu0+14)];
  var val15 = data1_32768[(alu0+15)];
  var val16 = data1_32768[(alu0+16)];
  var val17 = data1_32768[(alu0+17)];
  var val18 = data1_32768[(alu0+18)];
  var val19 = data1_32768[(alu0+19)];
  var val20 = data1_32768[(alu0+20)];
  var val21 = data1_32768[(alu0+21)];
  var val22 = data1_32768[(alu0+22)];
  var val23 = data1_32768[(alu0+23)];
  var val24 = data1_32768[(alu0+24)];
  var val25 = data1_32768[(alu0+25)];
  var val26 = data1_32768[(alu0+26)];
  var val27 = data1_32768[(alu0+27)];
  var val28 = data1_32768[(alu0+28)];
  var val29 = data1_32768[(alu0+29)];
  var val30 = data1_32768[(alu0+30)];
  var val31 = data1_32768[(alu0+31)];
  var alu1 = (bitcast<i32>((cast0<<7u))+bitcast<i32>((cast1<<2u)));
  data0_4096[alu1] = (val0+val1+val2+val3+val4+val5+val6+val7);
  data0_4096[(alu1+1)] = (val8+val9+val10+val11+val12+val13+val14+val15);
  data0_4096[(alu1+2)] = (val16+val17+val18+val19+val20+val21+val22+val23);
  data0_4096[(alu1+3)] = (val24+val25+val26+val27+val28+val29+val30+val31);
}