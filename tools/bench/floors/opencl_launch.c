// The OpenCL launch floor: the tiny kernel of the launch row launched from C
// on PoCL, clSetKernelArg for both arguments and clEnqueueNDRangeKernel with
// no event, clFinish once per batch. What a launch costs with no runtime in
// between: modrt's launch row is this plus Python and modrt.
#include "floor_common.h"
#include "pocl_add_one.h"

int main(int argc, char** argv) {
  long n;
  int batches;
  floor_args(argc, argv, &n, &batches);
  PoclAddOne cl;
  cl_int err = CL_SUCCESS;
  int unavailable = 0;
  const char* failed = pocl_add_one_setup(&cl, &err, &unavailable);
  if (failed != NULL) {
    if (unavailable) floor_unavailable(failed);
    floor_fail(failed, err);
  }
  cl_command_queue queue = clCreateCommandQueue(cl.context, cl.device, 0, &err);
  if (err != CL_SUCCESS) floor_fail("clCreateCommandQueue", err);
  enum { kElements = kAddOneElements };
  cl_kernel kernel = cl.kernel;
  cl_mem buf = cl.buf;
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
