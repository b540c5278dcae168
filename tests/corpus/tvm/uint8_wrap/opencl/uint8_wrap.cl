// Function: uint8_wrap_kernel
__kernel void uint8_wrap_kernel(__global uchar* restrict T_add_ptr, __global uchar* restrict a_ptr, __global uchar* restrict b_ptr);
__kernel void uint8_wrap_kernel(__global uchar* restrict T_add_ptr, __global uchar* restrict a_ptr, __global uchar* restrict b_ptr) {
  if ((convert_int(get_local_id(0))) < 64) {
    T_add_ptr[(convert_int(get_local_id(0)))] = (a_ptr[(convert_int(get_local_id(0)))] + b_ptr[(convert_int(get_local_id(0)))]);
  }
}

