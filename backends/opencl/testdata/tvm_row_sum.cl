// Function: main_kernel
__kernel void main_kernel(__global float* restrict M_ptr, __global float* restrict S_ptr);
__kernel void main_kernel(__global float* restrict M_ptr, __global float* restrict S_ptr) {
  for (int k = 0; k < 128; ++k) {
    if (k == 0) {
      S_ptr[(convert_int(get_local_id(0)))] = 0.000000e+00f;
    }
    S_ptr[(convert_int(get_local_id(0)))] = (S_ptr[(convert_int(get_local_id(0)))] + M_ptr[(((convert_int(get_local_id(0))) * 128) + k)]);
  }
}

