// Function: reduce_rows_fallback_kernel
__kernel void reduce_rows_fallback_kernel(__global float* restrict a_ptr, __global float* restrict a_red_ptr);
__kernel void reduce_rows_fallback_kernel(__global float* restrict a_ptr, __global float* restrict a_red_ptr) {
  if ((convert_int(get_local_id(0))) < 16) {
    a_red_ptr[(convert_int(get_local_id(0)))] = 0.000000e+00f;
  }
  for (int ax1 = 0; ax1 < 128; ++ax1) {
    if ((convert_int(get_local_id(0))) < 16) {
      a_red_ptr[(convert_int(get_local_id(0)))] = (a_red_ptr[(convert_int(get_local_id(0)))] + a_ptr[(((convert_int(get_local_id(0))) * 128) + ax1)]);
    }
  }
}

