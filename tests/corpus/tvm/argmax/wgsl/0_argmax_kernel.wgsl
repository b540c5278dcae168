@group(0) @binding(0) var<storage, read> a_ptr : array<f32>;
@group(0) @binding(1) var<storage, read_write> a_red_ptr : array<i32>;

struct PODArgs {
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

var<workgroup> red_buf0 : array<i32, 64>;
var<workgroup> red_buf1 : array<f32, 64>;
var<workgroup> a_red_temp_v0_shared : array<i32, 1>;
var<workgroup> a_red_temp_v1_shared : array<f32, 1>;
@compute @workgroup_size(64, 1, 1)
fn argmax_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var in_thread_a_red_temp_v0_shared : array<i32, 1>;
  var in_thread_a_red_temp_v1_shared : array<f32, 1>;
  in_thread_a_red_temp_v0_shared[0i] = -1i;
  in_thread_a_red_temp_v1_shared[0i] = -3.402823e+38f;
  if (i32(threadIdx.x) < 32i) {
    let cse_v1 : i32 = ((v__1 * 32i) + i32(threadIdx.x));
        var condval : i32;
    if (((a_ptr[((v__1 * 32i) + i32(threadIdx.x))] < in_thread_a_red_temp_v1_shared[0i]) || ((in_thread_a_red_temp_v1_shared[0i] == a_ptr[((v__1 * 32i) + i32(threadIdx.x))]) && (in_thread_a_red_temp_v0_shared[0i] < i32(threadIdx.x))))) {
      condval = in_thread_a_red_temp_v0_shared[0i];
} else {
      condval = i32(threadIdx.x);
}
let v_a_red_temp_v0 : i32 = condval;
        var condval_1 : f32;
    if ((a_ptr[((v__1 * 32i) + i32(threadIdx.x))] < in_thread_a_red_temp_v1_shared[0i])) {
      condval_1 = in_thread_a_red_temp_v1_shared[0i];
} else {
      condval_1 = a_ptr[((v__1 * 32i) + i32(threadIdx.x))];
}
let v_a_red_temp_v1 : f32 = condval_1;
    in_thread_a_red_temp_v0_shared[0i] = v_a_red_temp_v0;
    in_thread_a_red_temp_v1_shared[0i] = v_a_red_temp_v1;
  }
  workgroupBarrier();
  red_buf0[i32(threadIdx.x)] = in_thread_a_red_temp_v0_shared[0i];
  red_buf1[i32(threadIdx.x)] = in_thread_a_red_temp_v1_shared[0i];
  workgroupBarrier();
  if (i32(threadIdx.x) < 32i) {
    red_buf0[i32(threadIdx.x)] = select(red_buf0[(i32(threadIdx.x) + 32i)], red_buf0[i32(threadIdx.x)], ((red_buf1[(i32(threadIdx.x) + 32i)] < red_buf1[i32(threadIdx.x)]) || ((red_buf1[i32(threadIdx.x)] == red_buf1[(i32(threadIdx.x) + 32i)]) && (red_buf0[i32(threadIdx.x)] < red_buf0[(i32(threadIdx.x) + 32i)]))));
    red_buf1[i32(threadIdx.x)] = select(red_buf1[(i32(threadIdx.x) + 32i)], red_buf1[i32(threadIdx.x)], (red_buf1[(i32(threadIdx.x) + 32i)] < red_buf1[i32(threadIdx.x)]));
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 16i) {
    red_buf0[i32(threadIdx.x)] = select(red_buf0[(i32(threadIdx.x) + 16i)], red_buf0[i32(threadIdx.x)], ((red_buf1[(i32(threadIdx.x) + 16i)] < red_buf1[i32(threadIdx.x)]) || ((red_buf1[i32(threadIdx.x)] == red_buf1[(i32(threadIdx.x) + 16i)]) && (red_buf0[i32(threadIdx.x)] < red_buf0[(i32(threadIdx.x) + 16i)]))));
    red_buf1[i32(threadIdx.x)] = select(red_buf1[(i32(threadIdx.x) + 16i)], red_buf1[i32(threadIdx.x)], (red_buf1[(i32(threadIdx.x) + 16i)] < red_buf1[i32(threadIdx.x)]));
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 8i) {
    red_buf0[i32(threadIdx.x)] = select(red_buf0[(i32(threadIdx.x) + 8i)], red_buf0[i32(threadIdx.x)], ((red_buf1[(i32(threadIdx.x) + 8i)] < red_buf1[i32(threadIdx.x)]) || ((red_buf1[i32(threadIdx.x)] == red_buf1[(i32(threadIdx.x) + 8i)]) && (red_buf0[i32(threadIdx.x)] < red_buf0[(i32(threadIdx.x) + 8i)]))));
    red_buf1[i32(threadIdx.x)] = select(red_buf1[(i32(threadIdx.x) + 8i)], red_buf1[i32(threadIdx.x)], (red_buf1[(i32(threadIdx.x) + 8i)] < red_buf1[i32(threadIdx.x)]));
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 4i) {
    red_buf0[i32(threadIdx.x)] = select(red_buf0[(i32(threadIdx.x) + 4i)], red_buf0[i32(threadIdx.x)], ((red_buf1[(i32(threadIdx.x) + 4i)] < red_buf1[i32(threadIdx.x)]) || ((red_buf1[i32(threadIdx.x)] == red_buf1[(i32(threadIdx.x) + 4i)]) && (red_buf0[i32(threadIdx.x)] < red_buf0[(i32(threadIdx.x) + 4i)]))));
    red_buf1[i32(threadIdx.x)] = select(red_buf1[(i32(threadIdx.x) + 4i)], red_buf1[i32(threadIdx.x)], (red_buf1[(i32(threadIdx.x) + 4i)] < red_buf1[i32(threadIdx.x)]));
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 2i) {
    red_buf0[i32(threadIdx.x)] = select(red_buf0[(i32(threadIdx.x) + 2i)], red_buf0[i32(threadIdx.x)], ((red_buf1[(i32(threadIdx.x) + 2i)] < red_buf1[i32(threadIdx.x)]) || ((red_buf1[i32(threadIdx.x)] == red_buf1[(i32(threadIdx.x) + 2i)]) && (red_buf0[i32(threadIdx.x)] < red_buf0[(i32(threadIdx.x) + 2i)]))));
    red_buf1[i32(threadIdx.x)] = select(red_buf1[(i32(threadIdx.x) + 2i)], red_buf1[i32(threadIdx.x)], (red_buf1[(i32(threadIdx.x) + 2i)] < red_buf1[i32(threadIdx.x)]));
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 1i) {
    red_buf0[i32(threadIdx.x)] = select(red_buf0[(i32(threadIdx.x) + 1i)], red_buf0[i32(threadIdx.x)], ((red_buf1[(i32(threadIdx.x) + 1i)] < red_buf1[i32(threadIdx.x)]) || ((red_buf1[i32(threadIdx.x)] == red_buf1[(i32(threadIdx.x) + 1i)]) && (red_buf0[i32(threadIdx.x)] < red_buf0[(i32(threadIdx.x) + 1i)]))));
    red_buf1[i32(threadIdx.x)] = select(red_buf1[(i32(threadIdx.x) + 1i)], red_buf1[i32(threadIdx.x)], (red_buf1[(i32(threadIdx.x) + 1i)] < red_buf1[i32(threadIdx.x)]));
  }
  workgroupBarrier();
  if (i32(threadIdx.x) == 0i) {
    a_red_temp_v0_shared[0i] = red_buf0[0i];
    a_red_temp_v1_shared[0i] = red_buf1[0i];
  }
  workgroupBarrier();
  if (i32(threadIdx.x) < 1i) {
    a_red_ptr[v__1] = a_red_temp_v0_shared[0i];
  }
}


