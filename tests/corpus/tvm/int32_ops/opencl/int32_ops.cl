// Function: int32_ops_kernel
__kernel void int32_ops_kernel(__global int* restrict T_maximum_ptr, __global int* restrict a_ptr, __global int* restrict b_ptr);
__kernel void int32_ops_kernel(__global int* restrict T_maximum_ptr, __global int* restrict a_ptr, __global int* restrict b_ptr) {
  if ((convert_int(get_local_id(0))) < 64) {
    T_maximum_ptr[(convert_int(get_local_id(0)))] = max((int)((a_ptr[(convert_int(get_local_id(0)))] * 3) + b_ptr[(convert_int(get_local_id(0)))]), (int)b_ptr[(convert_int(get_local_id(0)))]);
  }
}

