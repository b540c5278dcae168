// Function: reduce_cols_kernel
__kernel void reduce_cols_kernel(__global float* restrict a_ptr, __global float* restrict a_red_ptr);
__kernel void reduce_cols_kernel(__global float* restrict a_ptr, __global float* restrict a_red_ptr) {
  float a_red_rf_local_ptr[1];
  __local float red_buf0_ptr[256];
  a_red_rf_local_ptr[0] = 0.000000e+00f;
  for (int ax1_fused_0 = 0; ax1_fused_0 < 8; ++ax1_fused_0) {
    a_red_rf_local_ptr[0] = (a_red_rf_local_ptr[0] + a_ptr[(((ax1_fused_0 * 256) + ((convert_int(get_local_id(1))) * 16)) + (convert_int(get_local_id(0))))]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  ((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] = a_red_rf_local_ptr[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(1))) < 8) {
    ((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] = (((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] + ((volatile __local float*)red_buf0_ptr)[((((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1)))) + 8)]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(1))) < 4) {
    ((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] = (((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] + ((volatile __local float*)red_buf0_ptr)[((((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1)))) + 4)]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(1))) < 2) {
    ((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] = (((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] + ((volatile __local float*)red_buf0_ptr)[((((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1)))) + 2)]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(1))) < 1) {
    ((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] = (((volatile __local float*)red_buf0_ptr)[(((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1))))] + ((volatile __local float*)red_buf0_ptr)[((((convert_int(get_local_id(0))) * 16) + (convert_int(get_local_id(1)))) + 1)]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(1))) == 0) {
    a_red_ptr[(convert_int(get_local_id(0)))] = ((volatile __local float*)red_buf0_ptr)[((convert_int(get_local_id(0))) * 16)];
  }
}

