// Function: vadd_kernel
//----------------------------------------
// Function: vadd_kernel
//----------------------------------------
@group(0) @binding(0) var<storage, read> A_ptr : array<f32>;
@group(0) @binding(1) var<storage, read> B_ptr : array<f32>;
@group(0) @binding(2) var<storage, read_write> C_ptr : array<f32>;

struct PODArgs {
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(3) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 1, 1)
fn vadd_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  let cse_v1 : i32 = ((v__1 * 64i) + i32(threadIdx.x));
  if (((v__1 * 64i) + i32(threadIdx.x)) < podArgs.n) {
    C_ptr[((v__1 * 64i) + i32(threadIdx.x))] = (A_ptr[((v__1 * 64i) + i32(threadIdx.x))] + B_ptr[((v__1 * 64i) + i32(threadIdx.x))]);
  }
}


