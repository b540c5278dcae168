// Function: conv2d_kernel
__kernel void conv2d_kernel(__global float* restrict conv2d_nchw_ptr, __global float* restrict w_ptr, __global float* restrict x_ptr);
__kernel void conv2d_kernel(__global float* restrict conv2d_nchw_ptr, __global float* restrict w_ptr, __global float* restrict x_ptr) {
  float conv2d_nchw_reindex_pad_local_ptr[16];
  __local float pad_temp_reindex_pad_shared_ptr[256];
  __local float w_reindex_pad_shared_ptr[256];
  for (int var = 0; var < 1; ++var) {
    conv2d_nchw_reindex_pad_local_ptr[0] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[1] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[2] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[3] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[4] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[5] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[6] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[7] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[8] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[9] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[10] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[11] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[12] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[13] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[14] = 0.000000e+00f;
    conv2d_nchw_reindex_pad_local_ptr[15] = 0.000000e+00f;
    int cse_v6 = ((convert_int(get_group_id(0))) * 32);
    int cse_v9 = ((convert_int(get_local_id(0))) * 4);
    for (int ax3_0 = 0; ax3_0 < 4; ++ax3_0) {
      int cse_v1 = (ax3_0 * 8);
      int cse_v2 = ((convert_int(get_local_id(0))) & 1);
      int cse_v3 = ((convert_int(get_group_id(0))) * 4);
      int cse_v4 = ((convert_int(get_local_id(1))) >> 1);
      int cse_v5 = ((convert_int(get_local_id(0))) >> 1);
      int cse_v7 = ((convert_int(get_local_id(1))) * 4);
      int cse_v8 = ((convert_int(get_local_id(1))) * 32);
      int cse_v11 = (((convert_int(get_local_id(0))) & 1) * 4);
      int cse_v12 = (((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4));
      int cse_v76 = ((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4));
      int cse_v77 = ((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1));
      int cse_v82 = (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3);
      int cse_v86 = ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 9) / 3);
      int cse_v87 = (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3));
      int cse_v95 = ((((convert_int(get_group_id(0))) * 4) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1));
      barrier(CLK_LOCAL_MEM_FENCE);
      float condval;
      if (((bool)(((bool)(((bool)(((bool)(((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) < 27)) && ((bool)(1 <= ((((convert_int(get_group_id(0))) * 4) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1)))))) && ((bool)(((((convert_int(get_group_id(0))) * 4) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1)) < 9)))) && ((bool)(1 <= (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3)))))) && ((bool)((((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3)) < 9))) {
        condval = x_ptr[((((((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) / 9) * 64) + ((convert_int(get_group_id(0))) * 32)) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 9) / 3) * 8)) + ((convert_int(get_local_id(1))) * 4)) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3)) - 9)];
      } else {
        condval = 0.000000e+00f;
      }
      pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4))] = condval;
      int cse_v78 = ((ax3_0 * 4) + (((convert_int(get_local_id(0))) & 1) * 2));
      int cse_v79 = ((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 1);
      int cse_v83 = (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1);
      int cse_v88 = ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 3);
      int cse_v90 = (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 9) / 3);
      int cse_v91 = (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 3));
      int cse_v97 = ((((convert_int(get_group_id(0))) * 4) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1));
      float condval_1;
      if (((bool)(((bool)(((bool)(((bool)(((ax3_0 * 4) + (((convert_int(get_local_id(0))) & 1) * 2)) < 13)) && ((bool)(1 <= ((((convert_int(get_group_id(0))) * 4) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1)))))) && ((bool)(((((convert_int(get_group_id(0))) * 4) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1)) < 9)))) && ((bool)(1 <= (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 3)))))) && ((bool)((((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 3)) < 9))) {
        condval_1 = x_ptr[(((((((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) / 9) * 64) + ((convert_int(get_group_id(0))) * 32)) + ((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 9) / 3) * 8)) + ((convert_int(get_local_id(1))) * 4)) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1) % 3)) - 9)];
      } else {
        condval_1 = 0.000000e+00f;
      }
      pad_temp_reindex_pad_shared_ptr[((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 1)] = condval_1;
      int cse_v80 = ((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 2);
      int cse_v84 = (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2);
      int cse_v89 = ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 3);
      int cse_v92 = (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 9) / 3);
      int cse_v93 = (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 3));
      int cse_v98 = ((((convert_int(get_group_id(0))) * 4) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1));
      float condval_2;
      if (((bool)(((bool)(((bool)(((bool)(((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) < 25)) && ((bool)(1 <= ((((convert_int(get_group_id(0))) * 4) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1)))))) && ((bool)(((((convert_int(get_group_id(0))) * 4) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 9) / 3)) + ((convert_int(get_local_id(1))) >> 1)) < 9)))) && ((bool)(1 <= (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 3)))))) && ((bool)((((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 3)) < 9))) {
        condval_2 = x_ptr[(((((((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) / 9) * 64) + ((convert_int(get_group_id(0))) * 32)) + ((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 9) / 3) * 8)) + ((convert_int(get_local_id(1))) * 4)) + ((convert_int(get_local_id(0))) >> 1)) + ((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2) % 3)) - 9)];
      } else {
        condval_2 = 0.000000e+00f;
      }
      pad_temp_reindex_pad_shared_ptr[((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 2)] = condval_2;
      int cse_v81 = ((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 3);
      int cse_v94 = (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) / 3) + 1) % 3);
      int cse_v96 = ((((convert_int(get_group_id(0))) * 4) + ((convert_int(get_local_id(1))) >> 1)) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) / 3) + 1) % 3));
      float condval_3;
      if (((bool)(((bool)(((bool)(((bool)(ax3_0 < 3)) && ((bool)(1 <= ((((convert_int(get_group_id(0))) * 4) + ((convert_int(get_local_id(1))) >> 1)) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) / 3) + 1) % 3)))))) && ((bool)(((((convert_int(get_group_id(0))) * 4) + ((convert_int(get_local_id(1))) >> 1)) + (((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) / 3) + 1) % 3)) < 9)))) && ((bool)(1 <= (((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3)))))) && ((bool)((((((convert_int(get_local_id(1))) & 1) * 4) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3)) < 9))) {
        condval_3 = x_ptr[(((((((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) + 3) / 9) * 64) + ((convert_int(get_group_id(0))) * 32)) + ((((((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) / 3) + 1) % 3) * 8)) + ((convert_int(get_local_id(1))) * 4)) + ((convert_int(get_local_id(0))) >> 1)) + (((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) % 3)) - 9)];
      } else {
        condval_3 = 0.000000e+00f;
      }
      pad_temp_reindex_pad_shared_ptr[((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 3)] = condval_3;
      int cse_v85 = (((((convert_int(get_local_id(0))) >> 1) * 27) + (ax3_0 * 8)) + (((convert_int(get_local_id(0))) & 1) * 4));
      float condval_4;
      if (((bool)((convert_int(get_local_id(1))) < 1)) && ((bool)(((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) < 27))) {
        condval_4 = w_ptr[(((((convert_int(get_local_id(0))) >> 1) * 27) + (ax3_0 * 8)) + (((convert_int(get_local_id(0))) & 1) * 4))];
      } else {
        condval_4 = 0.000000e+00f;
      }
      w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4))] = condval_4;
      float condval_5;
      if (((bool)((convert_int(get_local_id(1))) < 1)) && ((bool)(((ax3_0 * 4) + (((convert_int(get_local_id(0))) & 1) * 2)) < 13))) {
        condval_5 = w_ptr[((((((convert_int(get_local_id(0))) >> 1) * 27) + (ax3_0 * 8)) + (((convert_int(get_local_id(0))) & 1) * 4)) + 1)];
      } else {
        condval_5 = 0.000000e+00f;
      }
      w_reindex_pad_shared_ptr[((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 1)] = condval_5;
      float condval_6;
      if (((bool)((convert_int(get_local_id(1))) < 1)) && ((bool)(((ax3_0 * 8) + (((convert_int(get_local_id(0))) & 1) * 4)) < 25))) {
        condval_6 = w_ptr[((((((convert_int(get_local_id(0))) >> 1) * 27) + (ax3_0 * 8)) + (((convert_int(get_local_id(0))) & 1) * 4)) + 2)];
      } else {
        condval_6 = 0.000000e+00f;
      }
      w_reindex_pad_shared_ptr[((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 2)] = condval_6;
      float condval_7;
      if (((bool)((convert_int(get_local_id(1))) < 1)) && ((bool)(ax3_0 < 3))) {
        condval_7 = w_ptr[((((((convert_int(get_local_id(0))) >> 1) * 27) + (ax3_0 * 8)) + (((convert_int(get_local_id(0))) & 1) * 4)) + 3)];
      } else {
        condval_7 = 0.000000e+00f;
      }
      w_reindex_pad_shared_ptr[((((convert_int(get_local_id(1))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 3)] = condval_7;
      int cse_v10 = ((convert_int(get_local_id(0))) * 32);
      barrier(CLK_LOCAL_MEM_FENCE);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[((convert_int(get_local_id(0))) * 32)] * w_reindex_pad_shared_ptr[((convert_int(get_local_id(1))) * 32)]));
      int cse_v13 = (((convert_int(get_local_id(1))) * 32) + 8);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[((convert_int(get_local_id(0))) * 32)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 8)]));
      int cse_v14 = (((convert_int(get_local_id(1))) * 32) + 16);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[((convert_int(get_local_id(0))) * 32)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 16)]));
      int cse_v15 = (((convert_int(get_local_id(1))) * 32) + 24);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[((convert_int(get_local_id(0))) * 32)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 24)]));
      int cse_v16 = (((convert_int(get_local_id(0))) * 32) + 8);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 8)] * w_reindex_pad_shared_ptr[((convert_int(get_local_id(1))) * 32)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 8)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 8)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 8)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 16)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 8)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 24)]));
      int cse_v17 = (((convert_int(get_local_id(0))) * 32) + 16);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 16)] * w_reindex_pad_shared_ptr[((convert_int(get_local_id(1))) * 32)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 16)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 8)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 16)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 16)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 16)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 24)]));
      int cse_v18 = (((convert_int(get_local_id(0))) * 32) + 24);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 24)] * w_reindex_pad_shared_ptr[((convert_int(get_local_id(1))) * 32)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 24)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 8)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 24)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 16)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 24)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 24)]));
      int cse_v19 = (((convert_int(get_local_id(0))) * 32) + 1);
      int cse_v20 = (((convert_int(get_local_id(1))) * 32) + 1);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 1)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 1)]));
      int cse_v21 = (((convert_int(get_local_id(1))) * 32) + 9);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 1)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 9)]));
      int cse_v22 = (((convert_int(get_local_id(1))) * 32) + 17);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 1)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 17)]));
      int cse_v23 = (((convert_int(get_local_id(1))) * 32) + 25);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 1)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 25)]));
      int cse_v24 = (((convert_int(get_local_id(0))) * 32) + 9);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 9)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 1)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 9)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 9)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 9)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 17)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 9)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 25)]));
      int cse_v25 = (((convert_int(get_local_id(0))) * 32) + 17);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 17)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 1)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 17)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 9)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 17)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 17)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 17)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 25)]));
      int cse_v26 = (((convert_int(get_local_id(0))) * 32) + 25);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 25)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 1)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 25)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 9)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 25)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 17)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 25)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 25)]));
      int cse_v27 = (((convert_int(get_local_id(0))) * 32) + 2);
      int cse_v28 = (((convert_int(get_local_id(1))) * 32) + 2);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 2)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 2)]));
      int cse_v29 = (((convert_int(get_local_id(1))) * 32) + 10);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 2)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 10)]));
      int cse_v30 = (((convert_int(get_local_id(1))) * 32) + 18);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 2)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 18)]));
      int cse_v31 = (((convert_int(get_local_id(1))) * 32) + 26);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 2)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 26)]));
      int cse_v32 = (((convert_int(get_local_id(0))) * 32) + 10);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 10)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 2)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 10)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 10)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 10)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 18)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 10)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 26)]));
      int cse_v33 = (((convert_int(get_local_id(0))) * 32) + 18);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 18)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 2)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 18)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 10)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 18)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 18)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 18)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 26)]));
      int cse_v34 = (((convert_int(get_local_id(0))) * 32) + 26);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 26)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 2)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 26)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 10)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 26)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 18)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 26)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 26)]));
      int cse_v35 = (((convert_int(get_local_id(0))) * 32) + 3);
      int cse_v36 = (((convert_int(get_local_id(1))) * 32) + 3);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 3)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 3)]));
      int cse_v37 = (((convert_int(get_local_id(1))) * 32) + 11);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 3)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 11)]));
      int cse_v38 = (((convert_int(get_local_id(1))) * 32) + 19);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 3)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 19)]));
      int cse_v39 = (((convert_int(get_local_id(1))) * 32) + 27);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 3)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 27)]));
      int cse_v40 = (((convert_int(get_local_id(0))) * 32) + 11);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 11)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 3)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 11)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 11)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 11)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 19)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 11)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 27)]));
      int cse_v41 = (((convert_int(get_local_id(0))) * 32) + 19);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 19)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 3)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 19)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 11)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 19)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 19)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 19)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 27)]));
      int cse_v42 = (((convert_int(get_local_id(0))) * 32) + 27);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 27)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 3)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 27)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 11)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 27)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 19)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 27)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 27)]));
      int cse_v43 = (((convert_int(get_local_id(0))) * 32) + 4);
      int cse_v44 = (((convert_int(get_local_id(1))) * 32) + 4);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 4)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 4)]));
      int cse_v45 = (((convert_int(get_local_id(1))) * 32) + 12);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 4)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 12)]));
      int cse_v46 = (((convert_int(get_local_id(1))) * 32) + 20);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 4)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 20)]));
      int cse_v47 = (((convert_int(get_local_id(1))) * 32) + 28);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 4)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 28)]));
      int cse_v48 = (((convert_int(get_local_id(0))) * 32) + 12);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 12)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 4)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 12)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 12)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 12)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 20)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 12)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 28)]));
      int cse_v49 = (((convert_int(get_local_id(0))) * 32) + 20);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 20)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 4)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 20)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 12)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 20)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 20)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 20)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 28)]));
      int cse_v50 = (((convert_int(get_local_id(0))) * 32) + 28);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 28)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 4)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 28)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 12)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 28)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 20)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 28)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 28)]));
      int cse_v51 = (((convert_int(get_local_id(0))) * 32) + 5);
      int cse_v52 = (((convert_int(get_local_id(1))) * 32) + 5);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 5)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 5)]));
      int cse_v53 = (((convert_int(get_local_id(1))) * 32) + 13);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 5)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 13)]));
      int cse_v54 = (((convert_int(get_local_id(1))) * 32) + 21);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 5)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 21)]));
      int cse_v55 = (((convert_int(get_local_id(1))) * 32) + 29);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 5)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 29)]));
      int cse_v56 = (((convert_int(get_local_id(0))) * 32) + 13);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 13)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 5)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 13)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 13)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 13)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 21)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 13)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 29)]));
      int cse_v57 = (((convert_int(get_local_id(0))) * 32) + 21);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 21)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 5)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 21)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 13)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 21)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 21)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 21)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 29)]));
      int cse_v58 = (((convert_int(get_local_id(0))) * 32) + 29);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 29)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 5)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 29)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 13)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 29)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 21)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 29)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 29)]));
      int cse_v59 = (((convert_int(get_local_id(0))) * 32) + 6);
      int cse_v60 = (((convert_int(get_local_id(1))) * 32) + 6);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 6)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 6)]));
      int cse_v61 = (((convert_int(get_local_id(1))) * 32) + 14);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 6)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 14)]));
      int cse_v62 = (((convert_int(get_local_id(1))) * 32) + 22);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 6)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 22)]));
      int cse_v63 = (((convert_int(get_local_id(1))) * 32) + 30);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 6)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 30)]));
      int cse_v64 = (((convert_int(get_local_id(0))) * 32) + 14);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 14)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 6)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 14)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 14)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 14)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 22)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 14)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 30)]));
      int cse_v65 = (((convert_int(get_local_id(0))) * 32) + 22);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 22)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 6)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 22)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 14)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 22)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 22)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 22)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 30)]));
      int cse_v66 = (((convert_int(get_local_id(0))) * 32) + 30);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 30)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 6)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 30)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 14)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 30)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 22)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 30)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 30)]));
      int cse_v67 = (((convert_int(get_local_id(0))) * 32) + 7);
      int cse_v68 = (((convert_int(get_local_id(1))) * 32) + 7);
      conv2d_nchw_reindex_pad_local_ptr[0] = (conv2d_nchw_reindex_pad_local_ptr[0] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 7)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 7)]));
      int cse_v69 = (((convert_int(get_local_id(1))) * 32) + 15);
      conv2d_nchw_reindex_pad_local_ptr[1] = (conv2d_nchw_reindex_pad_local_ptr[1] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 7)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 15)]));
      int cse_v70 = (((convert_int(get_local_id(1))) * 32) + 23);
      conv2d_nchw_reindex_pad_local_ptr[2] = (conv2d_nchw_reindex_pad_local_ptr[2] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 7)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 23)]));
      int cse_v71 = (((convert_int(get_local_id(1))) * 32) + 31);
      conv2d_nchw_reindex_pad_local_ptr[3] = (conv2d_nchw_reindex_pad_local_ptr[3] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 7)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 31)]));
      int cse_v72 = (((convert_int(get_local_id(0))) * 32) + 15);
      conv2d_nchw_reindex_pad_local_ptr[4] = (conv2d_nchw_reindex_pad_local_ptr[4] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 15)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 7)]));
      conv2d_nchw_reindex_pad_local_ptr[5] = (conv2d_nchw_reindex_pad_local_ptr[5] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 15)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 15)]));
      conv2d_nchw_reindex_pad_local_ptr[6] = (conv2d_nchw_reindex_pad_local_ptr[6] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 15)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 23)]));
      conv2d_nchw_reindex_pad_local_ptr[7] = (conv2d_nchw_reindex_pad_local_ptr[7] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 15)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 31)]));
      int cse_v73 = (((convert_int(get_local_id(0))) * 32) + 23);
      conv2d_nchw_reindex_pad_local_ptr[8] = (conv2d_nchw_reindex_pad_local_ptr[8] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 23)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 7)]));
      conv2d_nchw_reindex_pad_local_ptr[9] = (conv2d_nchw_reindex_pad_local_ptr[9] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 23)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 15)]));
      conv2d_nchw_reindex_pad_local_ptr[10] = (conv2d_nchw_reindex_pad_local_ptr[10] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 23)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 23)]));
      conv2d_nchw_reindex_pad_local_ptr[11] = (conv2d_nchw_reindex_pad_local_ptr[11] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 23)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 31)]));
      int cse_v74 = (((convert_int(get_local_id(0))) * 32) + 31);
      conv2d_nchw_reindex_pad_local_ptr[12] = (conv2d_nchw_reindex_pad_local_ptr[12] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 31)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 7)]));
      conv2d_nchw_reindex_pad_local_ptr[13] = (conv2d_nchw_reindex_pad_local_ptr[13] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 31)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 15)]));
      conv2d_nchw_reindex_pad_local_ptr[14] = (conv2d_nchw_reindex_pad_local_ptr[14] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 31)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 23)]));
      conv2d_nchw_reindex_pad_local_ptr[15] = (conv2d_nchw_reindex_pad_local_ptr[15] + (pad_temp_reindex_pad_shared_ptr[(((convert_int(get_local_id(0))) * 32) + 31)] * w_reindex_pad_shared_ptr[(((convert_int(get_local_id(1))) * 32) + 31)]));
    }
    int cse_v75 = (((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4));
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[(((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4))] = conv2d_nchw_reindex_pad_local_ptr[0];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 64)] = conv2d_nchw_reindex_pad_local_ptr[1];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 128)] = conv2d_nchw_reindex_pad_local_ptr[2];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 192)] = conv2d_nchw_reindex_pad_local_ptr[3];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 1)] = conv2d_nchw_reindex_pad_local_ptr[4];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 65)] = conv2d_nchw_reindex_pad_local_ptr[5];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 129)] = conv2d_nchw_reindex_pad_local_ptr[6];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 193)] = conv2d_nchw_reindex_pad_local_ptr[7];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 2)] = conv2d_nchw_reindex_pad_local_ptr[8];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 66)] = conv2d_nchw_reindex_pad_local_ptr[9];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 130)] = conv2d_nchw_reindex_pad_local_ptr[10];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 194)] = conv2d_nchw_reindex_pad_local_ptr[11];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 3)] = conv2d_nchw_reindex_pad_local_ptr[12];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 67)] = conv2d_nchw_reindex_pad_local_ptr[13];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 131)] = conv2d_nchw_reindex_pad_local_ptr[14];
    }
    if ((convert_int(get_local_id(1))) < 1) {
      conv2d_nchw_ptr[((((convert_int(get_group_id(0))) * 32) + ((convert_int(get_local_id(0))) * 4)) + 195)] = conv2d_nchw_reindex_pad_local_ptr[15];
    }
  }
}

