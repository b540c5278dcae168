@group(0) @binding(0) var<storage, read_write> T_softmax_norm_ptr : array<f32>;
@group(0) @binding(1) var<storage, read> a_ptr : array<f32>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

var<workgroup> red_buf0 : array<f32, 64>;
var<workgroup> T_softmax_maxelem_shared : array<f32, 1>;
var<workgroup> red_buf0_1 : array<f32, 64>;
var<workgroup> T_softmax_expsum_shared : array<f32, 1>;
@compute @workgroup_size(64, 1, 1)
fn softmax_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var in_thread_T_softmax_maxelem_shared : array<f32, 1>;
  var in_thread_T_softmax_expsum_shared : array<f32, 1>;
  in_thread_T_softmax_maxelem_shared[0i] = -3.402823e+38f;
  let cse_v1 : i32 = ((v__1 * 32i) + i32(threadIdx.x));
  if (i32(threadIdx.x) < 32i) {
    in_thread_T_softmax_maxelem_shared[0i] = max(in_thread_T_softmax_maxelem_shared[0i], a_ptr[((v__1 * 32i) + i32(threadIdx.x))]);
  }
  workgroupBarrier();
  red_buf0[i32(threadIdx.x)] = in_thread_T_softmax_maxelem_shared[0i];
  workgroupBarrier();
  if (i32(threadIdx.x) < 32i) {
    red_buf0[i32(threadIdx.x)] = max(red_buf0[i32(threadIdx.x)], red_buf0[(i32(threadIdx.x) + 32i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 16i) {
    red_buf0[i32(threadIdx.x)] = max(red_buf0[i32(threadIdx.x)], red_buf0[(i32(threadIdx.x) + 16i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 8i) {
    red_buf0[i32(threadIdx.x)] = max(red_buf0[i32(threadIdx.x)], red_buf0[(i32(threadIdx.x) + 8i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 4i) {
    red_buf0[i32(threadIdx.x)] = max(red_buf0[i32(threadIdx.x)], red_buf0[(i32(threadIdx.x) + 4i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 2i) {
    red_buf0[i32(threadIdx.x)] = max(red_buf0[i32(threadIdx.x)], red_buf0[(i32(threadIdx.x) + 2i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 1i) {
    red_buf0[i32(threadIdx.x)] = max(red_buf0[i32(threadIdx.x)], red_buf0[(i32(threadIdx.x) + 1i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) == 0i) {
    T_softmax_maxelem_shared[0i] = red_buf0[0i];
  }
  in_thread_T_softmax_expsum_shared[0i] = 0.000000e+00f;
  workgroupBarrier();
  if (i32(threadIdx.x) < 32i) {
    in_thread_T_softmax_expsum_shared[0i] = (in_thread_T_softmax_expsum_shared[0i] + exp((a_ptr[((v__1 * 32i) + i32(threadIdx.x))] - T_softmax_maxelem_shared[0i])));
  }
  workgroupBarrier();
  red_buf0_1[i32(threadIdx.x)] = in_thread_T_softmax_expsum_shared[0i];
  workgroupBarrier();
  if (i32(threadIdx.x) < 32i) {
    red_buf0_1[i32(threadIdx.x)] = (red_buf0_1[i32(threadIdx.x)] + red_buf0_1[(i32(threadIdx.x) + 32i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 16i) {
    red_buf0_1[i32(threadIdx.x)] = (red_buf0_1[i32(threadIdx.x)] + red_buf0_1[(i32(threadIdx.x) + 16i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 8i) {
    red_buf0_1[i32(threadIdx.x)] = (red_buf0_1[i32(threadIdx.x)] + red_buf0_1[(i32(threadIdx.x) + 8i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 4i) {
    red_buf0_1[i32(threadIdx.x)] = (red_buf0_1[i32(threadIdx.x)] + red_buf0_1[(i32(threadIdx.x) + 4i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 2i) {
    red_buf0_1[i32(threadIdx.x)] = (red_buf0_1[i32(threadIdx.x)] + red_buf0_1[(i32(threadIdx.x) + 2i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 1i) {
    red_buf0_1[i32(threadIdx.x)] = (red_buf0_1[i32(threadIdx.x)] + red_buf0_1[(i32(threadIdx.x) + 1i)]);
  }
  workgroupBarrier();
  if (i32(threadIdx.x) == 0i) {
    T_softmax_expsum_shared[0i] = red_buf0_1[0i];
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 32i) {
    T_softmax_norm_ptr[((v__1 * 32i) + i32(threadIdx.x))] = (exp((a_ptr[((v__1 * 32i) + i32(threadIdx.x))] - T_softmax_maxelem_shared[0i])) / T_softmax_expsum_shared[0i]);
  }
}


