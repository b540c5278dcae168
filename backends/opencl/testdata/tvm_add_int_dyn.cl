// Function: main_kernel
__kernel void main_kernel(__global float* restrict A_ptr, __global int* restrict B_ptr, __global float* restrict compute_ptr, int n);
__kernel void main_kernel(__global float* restrict A_ptr, __global int* restrict B_ptr, __global float* restrict compute_ptr, int n) {
  for (int i_fused_0 = 0; i_fused_0 < ((n + 65535) >> 16); ++i_fused_0) {
    int cse_v1 = (((i_fused_0 * 65536) + ((convert_int(get_group_id(0))) * 256)) + (convert_int(get_local_id(0))));
    if ((((i_fused_0 * 65536) + ((convert_int(get_group_id(0))) * 256)) + (convert_int(get_local_id(0)))) < n) {
      compute_ptr[(((i_fused_0 * 65536) + ((convert_int(get_group_id(0))) * 256)) + (convert_int(get_local_id(0))))] = (A_ptr[(((i_fused_0 * 65536) + ((convert_int(get_group_id(0))) * 256)) + (convert_int(get_local_id(0))))] + (convert_float(B_ptr[(((i_fused_0 * 65536) + ((convert_int(get_group_id(0))) * 256)) + (convert_int(get_local_id(0))))])));
    }
  }
}

