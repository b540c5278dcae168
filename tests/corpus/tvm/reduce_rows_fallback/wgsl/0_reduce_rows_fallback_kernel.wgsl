@group(0) @binding(0) var<storage, read> a_ptr : array<f32>;
@group(0) @binding(1) var<storage, read_write> a_red_ptr : array<f32>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(256, 1, 1)
fn reduce_rows_fallback_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  if (i32(threadIdx.x) < 16i) {
    a_red_ptr[i32(threadIdx.x)] = 0.000000e+00f;
  }
  for (var ax1 : i32 = 0i; ax1 < 128i; ax1++) {
    if (i32(threadIdx.x) < 16i) {
      a_red_ptr[i32(threadIdx.x)] = (a_red_ptr[i32(threadIdx.x)] + a_ptr[((i32(threadIdx.x) * 128i) + ax1)]);
    }
  }
}


