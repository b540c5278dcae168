// Function: argmax_kernel
__kernel void argmax_kernel(__global float* restrict a_ptr, __global int* restrict a_red_ptr);
__kernel void argmax_kernel(__global float* restrict a_ptr, __global int* restrict a_red_ptr) {
  int in_thread_a_red_temp_v0_shared_ptr[1];
  float in_thread_a_red_temp_v1_shared_ptr[1];
  __local int red_buf0_ptr[256];
  __local float red_buf1_ptr[256];
  __local int a_red_temp_v0_shared_ptr[1];
  __local float a_red_temp_v1_shared_ptr[1];
  in_thread_a_red_temp_v0_shared_ptr[0] = -1;
  in_thread_a_red_temp_v1_shared_ptr[0] = -3.402823e+38f;
  if ((convert_int(get_local_id(0))) < 32) {
    int cse_v1 = (((convert_int(get_group_id(0))) * 32) + (convert_int(get_local_id(0))));
    int condval;
    if (((bool)(a_ptr[(((convert_int(get_group_id(0))) * 32) + (convert_int(get_local_id(0))))] < in_thread_a_red_temp_v1_shared_ptr[0])) || ((bool)(((bool)(in_thread_a_red_temp_v1_shared_ptr[0] == a_ptr[(((convert_int(get_group_id(0))) * 32) + (convert_int(get_local_id(0))))])) && ((bool)(in_thread_a_red_temp_v0_shared_ptr[0] < (convert_int(get_local_id(0)))))))) {
      condval = in_thread_a_red_temp_v0_shared_ptr[0];
    } else {
      condval = (convert_int(get_local_id(0)));
    }
    int v_a_red_temp_v0 = condval;
    float condval_1;
    if (a_ptr[(((convert_int(get_group_id(0))) * 32) + (convert_int(get_local_id(0))))] < in_thread_a_red_temp_v1_shared_ptr[0]) {
      condval_1 = in_thread_a_red_temp_v1_shared_ptr[0];
    } else {
      condval_1 = a_ptr[(((convert_int(get_group_id(0))) * 32) + (convert_int(get_local_id(0))))];
    }
    float v_a_red_temp_v1 = condval_1;
    in_thread_a_red_temp_v0_shared_ptr[0] = v_a_red_temp_v0;
    in_thread_a_red_temp_v1_shared_ptr[0] = v_a_red_temp_v1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = in_thread_a_red_temp_v0_shared_ptr[0];
  ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = in_thread_a_red_temp_v1_shared_ptr[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 128) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 128)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 128)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 128)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 128)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 128)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 128)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 64) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 64)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 64)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 64)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 64)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 64)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 64)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 32) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 32)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 32)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 32)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 32)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 32)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 32)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 16) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 16)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 16)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 16)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 16)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 16)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 16)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 8) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 8)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 8)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 8)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 8)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 8)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 8)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 4) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 4)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 4)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 4)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 4)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 4)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 4)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 2) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 2)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 2)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 2)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 2)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 2)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 2)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 1) {
    ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 1)], ((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))], (convert_int((((bool)(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 1)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))])) || ((bool)(((bool)(((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] == ((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 1)])) && ((bool)(((volatile __local int*)red_buf0_ptr)[(convert_int(get_local_id(0)))] < ((volatile __local int*)red_buf0_ptr)[((convert_int(get_local_id(0))) + 1)]))))))));
    ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))] = select(((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 1)], ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))], (convert_int((((volatile __local float*)red_buf1_ptr)[((convert_int(get_local_id(0))) + 1)] < ((volatile __local float*)red_buf1_ptr)[(convert_int(get_local_id(0)))]))));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) == 0) {
    a_red_temp_v0_shared_ptr[0] = ((volatile __local int*)red_buf0_ptr)[0];
    a_red_temp_v1_shared_ptr[0] = ((volatile __local float*)red_buf1_ptr)[0];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((convert_int(get_local_id(0))) < 1) {
    a_red_ptr[(convert_int(get_group_id(0)))] = a_red_temp_v0_shared_ptr[0];
  }
}

