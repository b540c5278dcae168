// The OpenCL launch floor: the tiny kernel of the launch row launched from C
// on PoCL, clSetKernelArg for both arguments and clEnqueueNDRangeKernel with
// no event, clFinish once per batch. What a launch costs with no runtime in
// between: modrt's launch row is this plus Python and modrt.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <string.h>

#include "floor_common.h"

static const char* kSource =
    "__kernel void add_one(__global float* a, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) a[i] += 1.0f;\n"
    "}\n";

int main(int argc, char** argv) {
  long n;
  int batches;
  floor_args(argc, argv, &n, &batches);
  cl_uint nplatforms = 0;
  cl_platform_id platforms[16];
  if (clGetPlatformIDs(16, platforms, &nplatforms) != CL_SUCCESS || nplatforms == 0) {
    floor_unavailable("no OpenCL platform");
  }
  cl_platform_id platform = NULL;
  for (cl_uint i = 0; i < nplatforms && i < 16; ++i) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL);
    if (strstr(name, "Portable Computing Language") || strstr(name, "pocl"))
      platform = platforms[i];
  }
  if (platform == NULL) floor_unavailable("no PoCL platform");
  cl_device_id device;
  cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  if (err != CL_SUCCESS) floor_fail("clGetDeviceIDs", err);
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) floor_fail("clCreateContext", err);
  cl_command_queue queue = clCreateCommandQueue(ctx, device, 0, &err);
  if (err != CL_SUCCESS) floor_fail("clCreateCommandQueue", err);
  cl_program program = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err);
  if (err != CL_SUCCESS) floor_fail("clCreateProgramWithSource", err);
  err = clBuildProgram(program, 1, &device, "", NULL, NULL);
  if (err != CL_SUCCESS) floor_fail("clBuildProgram", err);
  cl_kernel kernel = clCreateKernel(program, "add_one", &err);
  if (err != CL_SUCCESS) floor_fail("clCreateKernel", err);
  enum { kElements = 64 };
  float zeros[kElements] = {0};
  cl_mem buf =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zeros), zeros, &err);
  if (err != CL_SUCCESS) floor_fail("clCreateBuffer", err);
  const cl_int count = kElements;
  const size_t global = kElements, local = kElements;

  double* per = malloc(sizeof(double) * (size_t)batches);
  long launched = 0;
  for (int b = -1; b < batches; ++b) {  // batch -1: warm-up
    double start = floor_now();
    for (long i = 0; i < n; ++i) {
      clSetKernelArg(kernel, 0, sizeof(cl_mem), &buf);
      clSetKernelArg(kernel, 1, sizeof(cl_int), &count);
      err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
      if (err != CL_SUCCESS) floor_fail("clEnqueueNDRangeKernel", err);
    }
    clFinish(queue);
    double elapsed = floor_now() - start;
    launched += n;
    if (b >= 0) per[b] = elapsed / (double)n;
  }
  // The kernel really ran every time.
  float out[kElements];
  err = clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL);
  if (err != CL_SUCCESS) floor_fail("clEnqueueReadBuffer", err);
  if (out[0] != (float)launched || out[kElements - 1] != (float)launched) {
    fprintf(stderr, "add_one ran %g times, expected %ld\n", out[0], launched);
    return 1;
  }
  printf("%.12g\n", floor_best(per, batches));
  return 0;
}
