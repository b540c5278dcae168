// The OpenCL launch floor as a bare CPython extension: the launch row's
// driver calls (clSetKernelArg x2 + clEnqueueNDRangeKernel on PoCL, as
// opencl_launch.c) made per call from Python, with the launch row's four
// arguments (a buffer object, n, grid, block) converted by hand under
// METH_FASTCALL. What a launch from Python costs with no runtime in between:
// the C floor plus CPython's call protocol and argument conversion.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <string.h>

static const char* kSource =
    "__kernel void add_one(__global float* a, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) a[i] += 1.0f;\n"
    "}\n";

enum { kElements = 64 };
static cl_command_queue queue;
static cl_command_queue profiled_queue;  // CL_QUEUE_PROFILING_ENABLE, as modrt's queues
static cl_kernel kernel;
static cl_mem buf;

static PyObject* fail(const char* what, cl_int err) {
  return PyErr_Format(PyExc_RuntimeError, "%s failed: %d", what, (int)err);
}

// setup(): the PoCL context, kernel and a 64-float buffer of zeros.
static PyObject* setup(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  cl_uint nplatforms = 0;
  cl_platform_id platforms[16];
  if (clGetPlatformIDs(16, platforms, &nplatforms) != CL_SUCCESS || nplatforms == 0)
    return PyErr_Format(PyExc_ImportError, "no OpenCL platform");
  cl_platform_id platform = NULL;
  for (cl_uint i = 0; i < nplatforms && i < 16; ++i) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL);
    if (strstr(name, "Portable Computing Language") || strstr(name, "pocl"))
      platform = platforms[i];
  }
  if (platform == NULL) return PyErr_Format(PyExc_ImportError, "no PoCL platform");
  cl_device_id device;
  cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  if (err != CL_SUCCESS) return fail("clGetDeviceIDs", err);
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) return fail("clCreateContext", err);
  queue = clCreateCommandQueue(ctx, device, 0, &err);
  if (err != CL_SUCCESS) return fail("clCreateCommandQueue", err);
  profiled_queue = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) return fail("clCreateCommandQueue", err);
  cl_program program = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err);
  if (err != CL_SUCCESS) return fail("clCreateProgramWithSource", err);
  err = clBuildProgram(program, 1, &device, "", NULL, NULL);
  if (err != CL_SUCCESS) return fail("clBuildProgram", err);
  kernel = clCreateKernel(program, "add_one", &err);
  if (err != CL_SUCCESS) return fail("clCreateKernel", err);
  float zeros[kElements] = {0};
  buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zeros), zeros, &err);
  if (err != CL_SUCCESS) return fail("clCreateBuffer", err);
  Py_RETURN_NONE;
}

// launch(a, n, grid, block): one launch, its arguments converted from Python.
static PyObject* launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 4) return PyErr_Format(PyExc_TypeError, "launch takes 4 arguments");
  const cl_int count = (cl_int)PyLong_AsLong(args[1]);
  const size_t global = PyLong_AsSize_t(args[2]) * PyLong_AsSize_t(args[3]);
  const size_t local = PyLong_AsSize_t(args[3]);
  if (PyErr_Occurred()) return NULL;
  clSetKernelArg(kernel, 0, sizeof(cl_mem), &buf);
  clSetKernelArg(kernel, 1, sizeof(cl_int), &count);
  cl_int err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
  if (err != CL_SUCCESS) return fail("clEnqueueNDRangeKernel", err);
  Py_RETURN_NONE;
}

// loop(n, work_dim=1, profiled=0): n launches in a C loop (opencl_launch.c's
// inner loop, in process), as a 1-D range or as the same range given in
// work_dim dimensions (the extra ones of size 1), on a plain queue or on one
// with profiling enabled.
static PyObject* loop(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs < 1 || nargs > 3) return PyErr_Format(PyExc_TypeError, "loop takes 1 to 3 arguments");
  const long n = PyLong_AsLong(args[0]);
  const long work_dim = nargs >= 2 ? PyLong_AsLong(args[1]) : 1;
  const int profiled = nargs == 3 ? PyObject_IsTrue(args[2]) : 0;
  cl_command_queue q = profiled ? profiled_queue : queue;
  if (PyErr_Occurred()) return NULL;
  if (work_dim < 1 || work_dim > 3) return PyErr_Format(PyExc_ValueError, "work_dim is 1, 2 or 3");
  const cl_int count = kElements;
  const size_t global[3] = {kElements, 1, 1}, local[3] = {kElements, 1, 1};
  for (long i = 0; i < n; ++i) {
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &buf);
    clSetKernelArg(kernel, 1, sizeof(cl_int), &count);
    cl_int err =
        clEnqueueNDRangeKernel(q, kernel, (cl_uint)work_dim, NULL, global, local, 0, NULL, NULL);
    if (err != CL_SUCCESS) return fail("clEnqueueNDRangeKernel", err);
  }
  Py_RETURN_NONE;
}

// finish(): clFinish; returns the first element (how many times add_one ran).
static PyObject* finish(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  clFinish(profiled_queue);
  clFinish(queue);
  float first = 0;
  cl_int err = clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof(first), &first, 0, NULL, NULL);
  if (err != CL_SUCCESS) return fail("clEnqueueReadBuffer", err);
  return PyFloat_FromDouble(first);
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))setup, METH_FASTCALL, "PoCL context, kernel, buffer."},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL, "launch(a, n, grid, block)."},
    {"loop", (PyCFunction)(void (*)(void))loop, METH_FASTCALL,
     "loop(n, work_dim=1, profiled=0): n launches in C."},
    {"finish", (PyCFunction)(void (*)(void))finish, METH_FASTCALL, "clFinish; the first value."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "opencl_launch_ext", NULL, -1, methods};

PyMODINIT_FUNC PyInit_opencl_launch_ext(void) { return PyModule_Create(&module); }
