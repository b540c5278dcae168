@group(0) @binding(0) var<storage, read_write> conv2d_nchw_ptr : array<f32>;
@group(0) @binding(1) var<storage, read> w_ptr : array<f32>;
@group(0) @binding(2) var<storage, read> x_ptr : array<f32>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(3) var<uniform> podArgs : PODArgs;

var<workgroup> pad_temp_reindex_pad_shared : array<f32, 256>;
var<workgroup> w_reindex_pad_shared : array<f32, 256>;
@compute @workgroup_size(8, 8, 1)
fn conv2d_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  var conv2d_nchw_reindex_pad_local : array<f32, 16>;
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  for (var var_1 : i32 = 0i; var_1 < 1i; var_1++) {
    conv2d_nchw_reindex_pad_local[0i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[1i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[2i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[3i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[4i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[5i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[6i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[7i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[8i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[9i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[10i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[11i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[12i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[13i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[14i] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local[15i] = 0.000000e+00f;
    let cse_v6 : i32 = (v__1 * 32i);
    let cse_v9 : i32 = (i32(threadIdx.x) * 4i);
    for (var ax3_0 : i32 = 0i; ax3_0 < 4i; ax3_0++) {
      let cse_v1 : i32 = (ax3_0 * 8i);
      let cse_v2 : i32 = (i32(threadIdx.x) & 1i);
      let cse_v3 : i32 = (v__1 * 4i);
      let cse_v4 : i32 = (i32(threadIdx.y)>>1u);
      let cse_v5 : i32 = (i32(threadIdx.x)>>1u);
      let cse_v7 : i32 = (i32(threadIdx.y) * 4i);
      let cse_v8 : i32 = (i32(threadIdx.y) * 32i);
      let cse_v11 : i32 = ((i32(threadIdx.x) & 1i) * 4i);
      let cse_v12 : i32 = ((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i));
      let cse_v76 : i32 = ((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i));
      let cse_v77 : i32 = (((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u));
      let cse_v82 : i32 = (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i);
      let cse_v86 : i32 = ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 9i) / 3i);
      let cse_v87 : i32 = ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i));
      let cse_v95 : i32 = (((v__1 * 4i) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 9i) / 3i)) + (i32(threadIdx.y)>>1u));
      workgroupBarrier();
      var condval : f32;
      if ((((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) < 27i) && (1i <= (((v__1 * 4i) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 9i) / 3i)) + (i32(threadIdx.y)>>1u)))) && ((((v__1 * 4i) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 9i) / 3i)) + (i32(threadIdx.y)>>1u)) < 9i)) && (1i <= ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i)))) && (((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i)) < 9i))) {
        condval = x_ptr[((((((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) / 9i) * 64i) + (v__1 * 32i)) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 9i) / 3i) * 8i)) + (i32(threadIdx.y) * 4i)) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i)) - 9i)];
} else {
        condval = 0.000000e+00f;
}
      pad_temp_reindex_pad_shared[((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i))] = condval;
      let cse_v78 : i32 = ((ax3_0 * 4i) + ((i32(threadIdx.x) & 1i) * 2i));
      let cse_v79 : i32 = (((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 1i);
      let cse_v83 : i32 = (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i);
      let cse_v88 : i32 = ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 3i);
      let cse_v90 : i32 = (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 9i) / 3i);
      let cse_v91 : i32 = ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 3i));
      let cse_v97 : i32 = (((v__1 * 4i) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 9i) / 3i)) + (i32(threadIdx.y)>>1u));
      var condval_1 : f32;
      if ((((((((ax3_0 * 4i) + ((i32(threadIdx.x) & 1i) * 2i)) < 13i) && (1i <= (((v__1 * 4i) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 9i) / 3i)) + (i32(threadIdx.y)>>1u)))) && ((((v__1 * 4i) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 9i) / 3i)) + (i32(threadIdx.y)>>1u)) < 9i)) && (1i <= ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 3i)))) && (((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 3i)) < 9i))) {
        condval_1 = x_ptr[(((((((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) / 9i) * 64i) + (v__1 * 32i)) + ((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 9i) / 3i) * 8i)) + (i32(threadIdx.y) * 4i)) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i) % 3i)) - 9i)];
} else {
        condval_1 = 0.000000e+00f;
}
      pad_temp_reindex_pad_shared[(((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 1i)] = condval_1;
      let cse_v80 : i32 = (((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 2i);
      let cse_v84 : i32 = (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i);
      let cse_v89 : i32 = ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 3i);
      let cse_v92 : i32 = (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 9i) / 3i);
      let cse_v93 : i32 = ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 3i));
      let cse_v98 : i32 = (((v__1 * 4i) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 9i) / 3i)) + (i32(threadIdx.y)>>1u));
      var condval_2 : f32;
      if ((((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) < 25i) && (1i <= (((v__1 * 4i) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 9i) / 3i)) + (i32(threadIdx.y)>>1u)))) && ((((v__1 * 4i) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 9i) / 3i)) + (i32(threadIdx.y)>>1u)) < 9i)) && (1i <= ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 3i)))) && (((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 3i)) < 9i))) {
        condval_2 = x_ptr[(((((((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) / 9i) * 64i) + (v__1 * 32i)) + ((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 9i) / 3i) * 8i)) + (i32(threadIdx.y) * 4i)) + (i32(threadIdx.x)>>1u)) + ((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i) % 3i)) - 9i)];
} else {
        condval_2 = 0.000000e+00f;
}
      pad_temp_reindex_pad_shared[(((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 2i)] = condval_2;
      let cse_v81 : i32 = (((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 3i);
      let cse_v94 : i32 = (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) / 3i) + 1i) % 3i);
      let cse_v96 : i32 = (((v__1 * 4i) + (i32(threadIdx.y)>>1u)) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) / 3i) + 1i) % 3i));
      var condval_3 : f32;
      if ((((((ax3_0 < 3i) && (1i <= (((v__1 * 4i) + (i32(threadIdx.y)>>1u)) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) / 3i) + 1i) % 3i)))) && ((((v__1 * 4i) + (i32(threadIdx.y)>>1u)) + (((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) / 3i) + 1i) % 3i)) < 9i)) && (1i <= ((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i)))) && (((((i32(threadIdx.y) & 1i) * 4i) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i)) < 9i))) {
        condval_3 = x_ptr[(((((((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) + 3i) / 9i) * 64i) + (v__1 * 32i)) + ((((((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) / 3i) + 1i) % 3i) * 8i)) + (i32(threadIdx.y) * 4i)) + (i32(threadIdx.x)>>1u)) + (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) % 3i)) - 9i)];
} else {
        condval_3 = 0.000000e+00f;
}
      pad_temp_reindex_pad_shared[(((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 3i)] = condval_3;
      let cse_v85 : i32 = ((((i32(threadIdx.x)>>1u) * 27i) + (ax3_0 * 8i)) + ((i32(threadIdx.x) & 1i) * 4i));
      var condval_4 : f32;
      if (((i32(threadIdx.y) < 1i) && (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) < 27i))) {
        condval_4 = w_ptr[((((i32(threadIdx.x)>>1u) * 27i) + (ax3_0 * 8i)) + ((i32(threadIdx.x) & 1i) * 4i))];
} else {
        condval_4 = 0.000000e+00f;
}
      w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i))] = condval_4;
      var condval_5 : f32;
      if (((i32(threadIdx.y) < 1i) && (((ax3_0 * 4i) + ((i32(threadIdx.x) & 1i) * 2i)) < 13i))) {
        condval_5 = w_ptr[(((((i32(threadIdx.x)>>1u) * 27i) + (ax3_0 * 8i)) + ((i32(threadIdx.x) & 1i) * 4i)) + 1i)];
} else {
        condval_5 = 0.000000e+00f;
}
      w_reindex_pad_shared[(((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 1i)] = condval_5;
      var condval_6 : f32;
      if (((i32(threadIdx.y) < 1i) && (((ax3_0 * 8i) + ((i32(threadIdx.x) & 1i) * 4i)) < 25i))) {
        condval_6 = w_ptr[(((((i32(threadIdx.x)>>1u) * 27i) + (ax3_0 * 8i)) + ((i32(threadIdx.x) & 1i) * 4i)) + 2i)];
} else {
        condval_6 = 0.000000e+00f;
}
      w_reindex_pad_shared[(((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 2i)] = condval_6;
      var condval_7 : f32;
      if (((i32(threadIdx.y) < 1i) && (ax3_0 < 3i))) {
        condval_7 = w_ptr[(((((i32(threadIdx.x)>>1u) * 27i) + (ax3_0 * 8i)) + ((i32(threadIdx.x) & 1i) * 4i)) + 3i)];
} else {
        condval_7 = 0.000000e+00f;
}
      w_reindex_pad_shared[(((i32(threadIdx.y) * 32i) + (i32(threadIdx.x) * 4i)) + 3i)] = condval_7;
      let cse_v10 : i32 = (i32(threadIdx.x) * 32i);
      workgroupBarrier();
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[(i32(threadIdx.x) * 32i)], w_reindex_pad_shared[(i32(threadIdx.y) * 32i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v13 : i32 = ((i32(threadIdx.y) * 32i) + 8i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[(i32(threadIdx.x) * 32i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 8i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v14 : i32 = ((i32(threadIdx.y) * 32i) + 16i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[(i32(threadIdx.x) * 32i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 16i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v15 : i32 = ((i32(threadIdx.y) * 32i) + 24i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[(i32(threadIdx.x) * 32i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 24i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v16 : i32 = ((i32(threadIdx.x) * 32i) + 8i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 8i)], w_reindex_pad_shared[(i32(threadIdx.y) * 32i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 8i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 8i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 8i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 16i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 8i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 24i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v17 : i32 = ((i32(threadIdx.x) * 32i) + 16i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 16i)], w_reindex_pad_shared[(i32(threadIdx.y) * 32i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 16i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 8i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 16i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 16i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 16i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 24i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v18 : i32 = ((i32(threadIdx.x) * 32i) + 24i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 24i)], w_reindex_pad_shared[(i32(threadIdx.y) * 32i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 24i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 8i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 24i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 16i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 24i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 24i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v19 : i32 = ((i32(threadIdx.x) * 32i) + 1i);
      let cse_v20 : i32 = ((i32(threadIdx.y) * 32i) + 1i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 1i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 1i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v21 : i32 = ((i32(threadIdx.y) * 32i) + 9i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 1i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 9i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v22 : i32 = ((i32(threadIdx.y) * 32i) + 17i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 1i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 17i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v23 : i32 = ((i32(threadIdx.y) * 32i) + 25i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 1i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 25i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v24 : i32 = ((i32(threadIdx.x) * 32i) + 9i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 9i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 1i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 9i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 9i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 9i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 17i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 9i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 25i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v25 : i32 = ((i32(threadIdx.x) * 32i) + 17i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 17i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 1i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 17i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 9i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 17i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 17i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 17i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 25i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v26 : i32 = ((i32(threadIdx.x) * 32i) + 25i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 25i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 1i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 25i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 9i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 25i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 17i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 25i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 25i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v27 : i32 = ((i32(threadIdx.x) * 32i) + 2i);
      let cse_v28 : i32 = ((i32(threadIdx.y) * 32i) + 2i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 2i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 2i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v29 : i32 = ((i32(threadIdx.y) * 32i) + 10i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 2i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 10i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v30 : i32 = ((i32(threadIdx.y) * 32i) + 18i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 2i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 18i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v31 : i32 = ((i32(threadIdx.y) * 32i) + 26i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 2i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 26i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v32 : i32 = ((i32(threadIdx.x) * 32i) + 10i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 10i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 2i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 10i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 10i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 10i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 18i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 10i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 26i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v33 : i32 = ((i32(threadIdx.x) * 32i) + 18i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 18i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 2i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 18i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 10i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 18i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 18i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 18i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 26i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v34 : i32 = ((i32(threadIdx.x) * 32i) + 26i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 26i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 2i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 26i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 10i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 26i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 18i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 26i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 26i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v35 : i32 = ((i32(threadIdx.x) * 32i) + 3i);
      let cse_v36 : i32 = ((i32(threadIdx.y) * 32i) + 3i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 3i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 3i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v37 : i32 = ((i32(threadIdx.y) * 32i) + 11i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 3i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 11i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v38 : i32 = ((i32(threadIdx.y) * 32i) + 19i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 3i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 19i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v39 : i32 = ((i32(threadIdx.y) * 32i) + 27i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 3i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 27i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v40 : i32 = ((i32(threadIdx.x) * 32i) + 11i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 11i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 3i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 11i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 11i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 11i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 19i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 11i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 27i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v41 : i32 = ((i32(threadIdx.x) * 32i) + 19i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 19i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 3i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 19i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 11i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 19i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 19i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 19i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 27i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v42 : i32 = ((i32(threadIdx.x) * 32i) + 27i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 27i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 3i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 27i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 11i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 27i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 19i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 27i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 27i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v43 : i32 = ((i32(threadIdx.x) * 32i) + 4i);
      let cse_v44 : i32 = ((i32(threadIdx.y) * 32i) + 4i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 4i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 4i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v45 : i32 = ((i32(threadIdx.y) * 32i) + 12i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 4i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 12i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v46 : i32 = ((i32(threadIdx.y) * 32i) + 20i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 4i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 20i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v47 : i32 = ((i32(threadIdx.y) * 32i) + 28i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 4i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 28i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v48 : i32 = ((i32(threadIdx.x) * 32i) + 12i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 12i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 4i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 12i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 12i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 12i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 20i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 12i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 28i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v49 : i32 = ((i32(threadIdx.x) * 32i) + 20i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 20i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 4i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 20i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 12i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 20i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 20i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 20i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 28i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v50 : i32 = ((i32(threadIdx.x) * 32i) + 28i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 28i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 4i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 28i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 12i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 28i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 20i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 28i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 28i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v51 : i32 = ((i32(threadIdx.x) * 32i) + 5i);
      let cse_v52 : i32 = ((i32(threadIdx.y) * 32i) + 5i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 5i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 5i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v53 : i32 = ((i32(threadIdx.y) * 32i) + 13i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 5i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 13i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v54 : i32 = ((i32(threadIdx.y) * 32i) + 21i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 5i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 21i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v55 : i32 = ((i32(threadIdx.y) * 32i) + 29i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 5i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 29i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v56 : i32 = ((i32(threadIdx.x) * 32i) + 13i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 13i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 5i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 13i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 13i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 13i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 21i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 13i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 29i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v57 : i32 = ((i32(threadIdx.x) * 32i) + 21i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 21i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 5i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 21i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 13i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 21i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 21i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 21i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 29i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v58 : i32 = ((i32(threadIdx.x) * 32i) + 29i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 29i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 5i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 29i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 13i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 29i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 21i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 29i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 29i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v59 : i32 = ((i32(threadIdx.x) * 32i) + 6i);
      let cse_v60 : i32 = ((i32(threadIdx.y) * 32i) + 6i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 6i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 6i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v61 : i32 = ((i32(threadIdx.y) * 32i) + 14i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 6i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 14i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v62 : i32 = ((i32(threadIdx.y) * 32i) + 22i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 6i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 22i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v63 : i32 = ((i32(threadIdx.y) * 32i) + 30i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 6i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 30i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v64 : i32 = ((i32(threadIdx.x) * 32i) + 14i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 14i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 6i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 14i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 14i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 14i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 22i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 14i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 30i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v65 : i32 = ((i32(threadIdx.x) * 32i) + 22i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 22i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 6i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 22i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 14i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 22i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 22i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 22i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 30i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v66 : i32 = ((i32(threadIdx.x) * 32i) + 30i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 30i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 6i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 30i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 14i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 30i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 22i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 30i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 30i)], conv2d_nchw_reindex_pad_local[15i]);
      let cse_v67 : i32 = ((i32(threadIdx.x) * 32i) + 7i);
      let cse_v68 : i32 = ((i32(threadIdx.y) * 32i) + 7i);
      conv2d_nchw_reindex_pad_local[0i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 7i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 7i)], conv2d_nchw_reindex_pad_local[0i]);
      let cse_v69 : i32 = ((i32(threadIdx.y) * 32i) + 15i);
      conv2d_nchw_reindex_pad_local[1i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 7i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 15i)], conv2d_nchw_reindex_pad_local[1i]);
      let cse_v70 : i32 = ((i32(threadIdx.y) * 32i) + 23i);
      conv2d_nchw_reindex_pad_local[2i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 7i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 23i)], conv2d_nchw_reindex_pad_local[2i]);
      let cse_v71 : i32 = ((i32(threadIdx.y) * 32i) + 31i);
      conv2d_nchw_reindex_pad_local[3i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 7i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 31i)], conv2d_nchw_reindex_pad_local[3i]);
      let cse_v72 : i32 = ((i32(threadIdx.x) * 32i) + 15i);
      conv2d_nchw_reindex_pad_local[4i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 15i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 7i)], conv2d_nchw_reindex_pad_local[4i]);
      conv2d_nchw_reindex_pad_local[5i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 15i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 15i)], conv2d_nchw_reindex_pad_local[5i]);
      conv2d_nchw_reindex_pad_local[6i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 15i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 23i)], conv2d_nchw_reindex_pad_local[6i]);
      conv2d_nchw_reindex_pad_local[7i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 15i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 31i)], conv2d_nchw_reindex_pad_local[7i]);
      let cse_v73 : i32 = ((i32(threadIdx.x) * 32i) + 23i);
      conv2d_nchw_reindex_pad_local[8i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 23i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 7i)], conv2d_nchw_reindex_pad_local[8i]);
      conv2d_nchw_reindex_pad_local[9i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 23i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 15i)], conv2d_nchw_reindex_pad_local[9i]);
      conv2d_nchw_reindex_pad_local[10i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 23i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 23i)], conv2d_nchw_reindex_pad_local[10i]);
      conv2d_nchw_reindex_pad_local[11i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 23i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 31i)], conv2d_nchw_reindex_pad_local[11i]);
      let cse_v74 : i32 = ((i32(threadIdx.x) * 32i) + 31i);
      conv2d_nchw_reindex_pad_local[12i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 31i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 7i)], conv2d_nchw_reindex_pad_local[12i]);
      conv2d_nchw_reindex_pad_local[13i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 31i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 15i)], conv2d_nchw_reindex_pad_local[13i]);
      conv2d_nchw_reindex_pad_local[14i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 31i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 23i)], conv2d_nchw_reindex_pad_local[14i]);
      conv2d_nchw_reindex_pad_local[15i] = fma(pad_temp_reindex_pad_shared[((i32(threadIdx.x) * 32i) + 31i)], w_reindex_pad_shared[((i32(threadIdx.y) * 32i) + 31i)], conv2d_nchw_reindex_pad_local[15i]);
    }
    let cse_v75 : i32 = ((v__1 * 32i) + (i32(threadIdx.x) * 4i));
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[((v__1 * 32i) + (i32(threadIdx.x) * 4i))] = conv2d_nchw_reindex_pad_local[0i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 64i)] = conv2d_nchw_reindex_pad_local[1i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 128i)] = conv2d_nchw_reindex_pad_local[2i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 192i)] = conv2d_nchw_reindex_pad_local[3i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 1i)] = conv2d_nchw_reindex_pad_local[4i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 65i)] = conv2d_nchw_reindex_pad_local[5i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 129i)] = conv2d_nchw_reindex_pad_local[6i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 193i)] = conv2d_nchw_reindex_pad_local[7i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 2i)] = conv2d_nchw_reindex_pad_local[8i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 66i)] = conv2d_nchw_reindex_pad_local[9i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 130i)] = conv2d_nchw_reindex_pad_local[10i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 194i)] = conv2d_nchw_reindex_pad_local[11i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 3i)] = conv2d_nchw_reindex_pad_local[12i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 67i)] = conv2d_nchw_reindex_pad_local[13i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 131i)] = conv2d_nchw_reindex_pad_local[14i];
    }
    if (i32(threadIdx.y) < 1i) {
      conv2d_nchw_ptr[(((v__1 * 32i) + (i32(threadIdx.x) * 4i)) + 195i)] = conv2d_nchw_reindex_pad_local[15i];
    }
  }
}


