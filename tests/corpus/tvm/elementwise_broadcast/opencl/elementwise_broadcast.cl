// Function: elementwise_broadcast_kernel
__kernel void elementwise_broadcast_kernel(__global float* restrict T_multiply_ptr, __global float* restrict a_ptr, __global float* restrict b_ptr);
__kernel void elementwise_broadcast_kernel(__global float* restrict T_multiply_ptr, __global float* restrict a_ptr, __global float* restrict b_ptr) {
  if ((convert_int(get_local_id(0))) < 32) {
    T_multiply_ptr[(convert_int(get_local_id(0)))] = ((a_ptr[(convert_int(get_local_id(0)))] + b_ptr[((convert_int(get_local_id(0))) & 7)]) * 2.000000e+00f);
  }
}

