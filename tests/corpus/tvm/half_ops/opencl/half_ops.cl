// Function: half_ops_kernel
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#elif defined(cl_amd_fp16)
#pragma OPENCL EXTENSION cl_amd_fp16 : enable
#else
#error "Half precision floating point not supported by OpenCL implementation on your device." 
#endif

__kernel void half_ops_kernel(__global half* restrict a_ptr, __global half* restrict out_ptr);
__kernel void half_ops_kernel(__global half* restrict a_ptr, __global half* restrict out_ptr) {
  if ((convert_int(get_local_id(0))) < 64) {
    out_ptr[(convert_int(get_local_id(0)))] = ((a_ptr[(convert_int(get_local_id(0)))] * (half)2.000000e+00f) + (half)1.000000e+00f);
  }
}

