@group(0) @binding(0) var<storage, read_write> T_maximum_ptr : array<i32>;
@group(0) @binding(1) var<storage, read> a_ptr : array<i32>;
@group(0) @binding(2) var<storage, read> b_ptr : array<i32>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(3) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(256, 1, 1)
fn int32_ops_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  if (i32(threadIdx.x) < 64i) {
    T_maximum_ptr[i32(threadIdx.x)] = max(((a_ptr[i32(threadIdx.x)] * 3i) + b_ptr[i32(threadIdx.x)]), b_ptr[i32(threadIdx.x)]);
  }
}


