// modrt._ffi_ext: the CPython side of calling a modrt function. This file
// holds the module and its two types; the calls and the GIL are in
// ffi_calls.cc, the value conversions in ffi_values.cc, DLPack in
// ffi_dlpack.cc.
//
// ctypes spends microseconds per call building ModrtValue structures; this
// module does the same conversion in C so a call costs about as much as the
// native function itself. It defines the base types of modrt._ffi.Object
// (an owned handle, released when the Python object goes) and
// modrt._ffi.Function (callable with vectorcall). Everything that is not a hot
// path stays in Python and is handed in by _ffi.init(): boxing unusual
// arguments (bytes, devices, callables), wrapping returned objects in their
// classes, and turning "Kind: message" errors into exceptions.
//
// The core's C ABI symbols are resolved at load time from libmodrt_runtime.so,
// which modrt._ffi loads with RTLD_GLOBAL before importing this module, so the
// process keeps exactly one copy of the core.
//
// Built for CPython's limited API as of 3.10 (the stable ABI, `abi3`): one
// binary, _ffi_ext.abi3.so, serves every CPython >= 3.10. Calls take the
// vectorcall path (no argument tuple) on interpreters whose stable ABI has
// it (3.12 and later); on 3.10 and 3.11 they come through tp_call with a tuple.
#include "ffi_ext.h"  // Python.h, before any other Python header

#include <structmember.h>  // T_PYSSIZET, READONLY (Py_T_PYSSIZET is 3.12+)

#include <initializer_list>

namespace modrt_ffi {

Hooks hooks;
PyTypeObject* ObjectBaseType = nullptr;

namespace {

// The running interpreter's (major, minor) as a number, e.g. 0x030C.
int RuntimeVersion() {
  const char* v = Py_GetVersion();  // "3.12.4 (main, ...)"
  int major = 0, minor = 0;
  while (*v >= '0' && *v <= '9') major = major * 10 + (*v++ - '0');
  if (*v == '.') ++v;
  while (*v >= '0' && *v <= '9') minor = minor * 10 + (*v++ - '0');
  return (major << 8) | minor;
}

// ---- ObjectBase: an owned reference to a native object ----

PyObject* ObjectNew(PyTypeObject* type, PyObject*, PyObject*) {
  auto alloc = reinterpret_cast<allocfunc>(PyType_GetSlot(type, Py_tp_alloc));
  auto* self = reinterpret_cast<ObjectBase*>(alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->handle = nullptr;
  self->vectorcall = nullptr;
  return reinterpret_cast<PyObject*>(self);
}

int SetHandle(ObjectBase* self, PyObject* value) {
  void* handle = nullptr;
  if (value != nullptr && value != Py_None) {
    handle = PyLong_AsVoidPtr(value);
    if (handle == nullptr && PyErr_Occurred()) return -1;
  }
  self->handle = handle;
  return 0;
}

int ObjectInit(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"handle", nullptr};
  PyObject* handle = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", const_cast<char**>(kwlist), &handle))
    return -1;
  return SetHandle(reinterpret_cast<ObjectBase*>(self), handle);
}

void ObjectDealloc(PyObject* self) {
  auto* obj = reinterpret_cast<ObjectBase*>(self);
  if (obj->handle != nullptr) {
    ModrtObjectRelease(obj->handle);
    obj->handle = nullptr;
  }
  // An instance of a heap type holds a reference to its type. Python
  // subclasses come through subtype_dealloc, which leaves that to the heap
  // base's dealloc: this one.
  PyTypeObject* type = Py_TYPE(self);
  reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

PyObject* GetHandle(PyObject* self, void*) {
  void* handle = reinterpret_cast<ObjectBase*>(self)->handle;
  if (handle == nullptr) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(handle);
}

int SetHandleAttr(PyObject* self, PyObject* value, void*) {
  return SetHandle(reinterpret_cast<ObjectBase*>(self), value);
}

PyGetSetDef object_getset[] = {
    {"handle", GetHandle, SetHandleAttr, "the native handle (int), or None once released", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// ---- FunctionBase: calls ModrtFunctionCall (ffi_calls.cc) ----

PyObject* FunctionNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = ObjectNew(type, args, kwargs);
  if (self != nullptr) reinterpret_cast<ObjectBase*>(self)->vectorcall = FunctionVectorcall;
  return self;
}

// ---- module ----

PyObject* Init(PyObject*, PyObject* args) {
  Hooks next;
  if (!PyArg_ParseTuple(args, "OOOOO", &next.box_arg, &next.wrap_object, &next.make_device,
                        &next.error_from_message, &next.call_with_keywords)) {
    return nullptr;
  }
  for (PyObject* o : {next.box_arg, next.wrap_object, next.make_device, next.error_from_message,
                      next.call_with_keywords}) {
    Py_INCREF(o);
  }
  for (PyObject* o : {hooks.box_arg, hooks.wrap_object, hooks.make_device, hooks.error_from_message,
                      hooks.call_with_keywords}) {
    Py_XDECREF(o);
  }
  hooks = next;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"to_dlpack", ToDLPack, METH_VARARGS,
     "to_dlpack(tensor, versioned, flags): a DLPack capsule of a tensor."},
    {"from_dlpack", FromDLPack, METH_VARARGS,
     "from_dlpack(capsule, copy): the owned handle of a tensor adopting the capsule's DLPack "
     "tensor."},
    {"init", Init, METH_VARARGS,
     "init(box_arg, wrap_object, make_device, error_from_message, call_with_keywords): the Python "
     "halves of "
     "conversion."},
    {"write_return", WriteReturn, METH_VARARGS,
     "write_return(address, value): value as the owned ModrtValue result at address."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "modrt._ffi_ext",
    "Fast calls into the modrt C ABI.",
    -1,
    methods,
    nullptr,  // m_slots
    nullptr,  // m_traverse
    nullptr,  // m_clear
    nullptr,  // m_free
};

// Where each instance keeps its vectorcall function.
PyMemberDef object_members[] = {
    {const_cast<char*>("__vectorcalloffset__"), T_PYSSIZET,
     static_cast<Py_ssize_t>(offsetof(ObjectBase, vectorcall)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot object_slots[] = {
    {Py_tp_doc, const_cast<char*>("An owned reference to a native modrt object.")},
    {Py_tp_new, reinterpret_cast<void*>(ObjectNew)},
    {Py_tp_init, reinterpret_cast<void*>(ObjectInit)},
    {Py_tp_dealloc, reinterpret_cast<void*>(ObjectDealloc)},
    {Py_tp_getset, object_getset},
    {0, nullptr},
};

PyType_Slot function_slots[] = {
    {Py_tp_doc, const_cast<char*>("A callable native modrt function.")},
    {Py_tp_new, reinterpret_cast<void*>(FunctionNew)},
    {Py_tp_call, reinterpret_cast<void*>(FunctionTpCall)},
    {Py_tp_members, object_members},
    {0, nullptr},
};

}  // namespace
}  // namespace modrt_ffi

PyMODINIT_FUNC PyInit__ffi_ext(void) {
  using namespace modrt_ffi;  // NOLINT(build/namespaces): the module's own parts
  PyType_Spec object_spec = {"modrt._ffi_ext.ObjectBase", static_cast<int>(sizeof(ObjectBase)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, object_slots};
  // Vectorcall on heap types, inherited by Python subclasses (modrt._ffi.Function),
  // is stable ABI from 3.12; earlier interpreters call through tp_call.
  unsigned long function_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  if (RuntimeVersion() >= 0x030C) function_flags |= kTpFlagsHaveVectorcall;
  PyType_Spec function_spec = {"modrt._ffi_ext.FunctionBase", static_cast<int>(sizeof(ObjectBase)),
                               0, static_cast<unsigned int>(function_flags), function_slots};

  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  PyObject* object_type = PyType_FromSpec(&object_spec);
  PyObject* function_type =
      object_type == nullptr ? nullptr : PyType_FromSpecWithBases(&function_spec, object_type);
  bool ok = function_type != nullptr && PyModule_AddObjectRef(m, "ObjectBase", object_type) == 0 &&
            PyModule_AddObjectRef(m, "FunctionBase", function_type) == 0;
  if (!ok) {
    Py_XDECREF(object_type);
    Py_XDECREF(function_type);
    Py_DECREF(m);
    return nullptr;
  }
  // Our references are kept: ObjectBaseType lives as long as the process
  // (m_size -1: the module is never unloaded).
  ObjectBaseType = reinterpret_cast<PyTypeObject*>(object_type);
  Py_DECREF(function_type);
  InstallWaitHooks();
  return m;
}
