// Function: symbolic_scale_kernel
__kernel void symbolic_scale_kernel(__global float* restrict a_ptr, __global float* restrict out_ptr, int n);
__kernel void symbolic_scale_kernel(__global float* restrict a_ptr, __global float* restrict out_ptr, int n) {
  int cse_v1 = (((convert_int(get_group_id(0))) * 256) + (convert_int(get_local_id(0))));
  if ((((convert_int(get_group_id(0))) * 256) + (convert_int(get_local_id(0)))) < n) {
    out_ptr[(((convert_int(get_group_id(0))) * 256) + (convert_int(get_local_id(0))))] = (a_ptr[(((convert_int(get_group_id(0))) * 256) + (convert_int(get_local_id(0))))] * 2.000000e+00f);
  }
}

