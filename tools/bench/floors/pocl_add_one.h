// The OpenCL launch floors' shared set-up (opencl_launch.c, a program, and
// opencl_launch_ext.c, a CPython extension): PoCL's first device, a context,
// the launch row's add_one kernel built, and a buffer of kAddOneElements
// zeros. Each floor creates its own queues and reports a failure its own way.
#ifndef MODRT_BENCH_POCL_ADD_ONE_H_
#define MODRT_BENCH_POCL_ADD_ONE_H_

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <string.h>

enum { kAddOneElements = 64 };

typedef struct {
  cl_device_id device;
  cl_context context;
  cl_kernel kernel;
  cl_mem buf;
} PoclAddOne;

// NULL once `s` is set up; otherwise what failed: the machine has no PoCL
// (*unavailable set to 1) or the named OpenCL call returned *err.
static const char* pocl_add_one_setup(PoclAddOne* s, cl_int* err, int* unavailable) {
  static const char* kSource =
      "__kernel void add_one(__global float* a, int n) {\n"
      "  int i = get_global_id(0);\n"
      "  if (i < n) a[i] += 1.0f;\n"
      "}\n";
  *unavailable = 0;
  cl_uint nplatforms = 0;
  cl_platform_id platforms[16];
  if (clGetPlatformIDs(16, platforms, &nplatforms) != CL_SUCCESS || nplatforms == 0) {
    *unavailable = 1;
    return "no OpenCL platform";
  }
  cl_platform_id platform = NULL;
  for (cl_uint i = 0; i < nplatforms && i < 16; ++i) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL);
    if (strstr(name, "Portable Computing Language") || strstr(name, "pocl"))
      platform = platforms[i];
  }
  if (platform == NULL) {
    *unavailable = 1;
    return "no PoCL platform";
  }
  *err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &s->device, NULL);
  if (*err != CL_SUCCESS) return "clGetDeviceIDs";
  s->context = clCreateContext(NULL, 1, &s->device, NULL, NULL, err);
  if (*err != CL_SUCCESS) return "clCreateContext";
  cl_program program = clCreateProgramWithSource(s->context, 1, &kSource, NULL, err);
  if (*err != CL_SUCCESS) return "clCreateProgramWithSource";
  *err = clBuildProgram(program, 1, &s->device, "", NULL, NULL);
  if (*err != CL_SUCCESS) return "clBuildProgram";
  s->kernel = clCreateKernel(program, "add_one", err);
  if (*err != CL_SUCCESS) return "clCreateKernel";
  float zeros[kAddOneElements] = {0};
  s->buf = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zeros),
                          zeros, err);
  if (*err != CL_SUCCESS) return "clCreateBuffer";
  return NULL;
}

#endif  // MODRT_BENCH_POCL_ADD_ONE_H_
