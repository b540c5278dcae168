// The ffi-call floor: a bare CPython extension whose one function does
// nothing. `nop_ext.nop()` is the least a call from Python into native code
// can cost (METH_FASTCALL: no argument tuple, no keyword handling).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject* nop(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"nop", (PyCFunction)(void (*)(void))nop, METH_FASTCALL, "Does nothing."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "nop_ext", NULL, -1, methods};

PyMODINIT_FUNC PyInit_nop_ext(void) { return PyModule_Create(&module); }
