@group(0) @binding(0) var<storage, read> a_ptr : array<f32>;
@group(0) @binding(1) var<storage, read_write> out_ptr : array<f32>;

struct PODArgs {
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(256, 1, 1)
fn symbolic_scale_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  let cse_v1 : i32 = ((v__1 * 256i) + i32(threadIdx.x));
  if (((v__1 * 256i) + i32(threadIdx.x)) < podArgs.n) {
    out_ptr[((v__1 * 256i) + i32(threadIdx.x))] = (a_ptr[((v__1 * 256i) + i32(threadIdx.x))] * 2.000000e+00f);
  }
}


