// The OpenCL launch floor as a bare CPython extension: the launch row's
// driver calls (clSetKernelArg x2 + clEnqueueNDRangeKernel on PoCL, as
// opencl_launch.c) made per call from Python, with the launch row's four
// arguments (a buffer object, n, grid, block) converted by hand under
// METH_FASTCALL. What a launch from Python costs with no runtime in between:
// the C floor plus CPython's call protocol and argument conversion.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pocl_add_one.h"

enum { kElements = kAddOneElements };
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
  PoclAddOne cl;
  cl_int err = CL_SUCCESS;
  int unavailable = 0;
  const char* failed = pocl_add_one_setup(&cl, &err, &unavailable);
  if (failed != NULL)
    return unavailable ? PyErr_Format(PyExc_ImportError, "%s", failed) : fail(failed, err);
  queue = clCreateCommandQueue(cl.context, cl.device, 0, &err);
  if (err != CL_SUCCESS) return fail("clCreateCommandQueue", err);
  profiled_queue = clCreateCommandQueue(cl.context, cl.device, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) return fail("clCreateCommandQueue", err);
  kernel = cl.kernel;
  buf = cl.buf;
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
