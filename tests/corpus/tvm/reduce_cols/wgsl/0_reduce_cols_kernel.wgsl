@group(0) @binding(0) var<storage, read> a_ptr : array<f32>;
@group(0) @binding(1) var<storage, read_write> a_red_ptr : array<f32>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

var<workgroup> red_buf0 : array<f32, 256>;
@compute @workgroup_size(16, 16, 1)
fn reduce_cols_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var a_red_rf_local : array<f32, 1>;
  a_red_rf_local[0i] = 0.000000e+00f;
  for (var ax1_fused_0 : i32 = 0i; ax1_fused_0 < 8i; ax1_fused_0++) {
    a_red_rf_local[0i] = (a_red_rf_local[0i] + a_ptr[(((ax1_fused_0 * 256i) + (i32(threadIdx.y) * 16i)) + i32(threadIdx.x))]);
  }
  workgroupBarrier();
  red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] = a_red_rf_local[0i];
  workgroupBarrier();
  if (i32(threadIdx.y) < 8i) {
    red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] = (red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] + red_buf0[(((i32(threadIdx.x) * 16i) + i32(threadIdx.y)) + 8i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.y) < 4i) {
    red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] = (red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] + red_buf0[(((i32(threadIdx.x) * 16i) + i32(threadIdx.y)) + 4i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.y) < 2i) {
    red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] = (red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] + red_buf0[(((i32(threadIdx.x) * 16i) + i32(threadIdx.y)) + 2i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.y) < 1i) {
    red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] = (red_buf0[((i32(threadIdx.x) * 16i) + i32(threadIdx.y))] + red_buf0[(((i32(threadIdx.x) * 16i) + i32(threadIdx.y)) + 1i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.y) == 0i) {
    a_red_ptr[i32(threadIdx.x)] = red_buf0[(i32(threadIdx.x) * 16i)];
  }
}


