// modrt._ffi_ext: the CPython side of calling a modrt function.
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
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>  // T_PYSSIZET, READONLY (Py_T_PYSSIZET is 3.12+)

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "modrt/abi/c_api.h"

namespace {

// Python callables from modrt._ffi (set once by init()).
struct Hooks {
  PyObject* box_arg = nullptr;             // arg -> Object (kept alive) or (device_type, device_id)
  PyObject* wrap_object = nullptr;         // owned handle (int) -> Object of its class
  PyObject* make_device = nullptr;         // (device_type, device_id) -> Device
  PyObject* error_from_message = nullptr;  // str -> exception instance
  // (function, args tuple, kwargs dict) -> the call's result: orders the
  // values by the names the function's signature declares, and takes the
  // launch's `stream=` (calls with keywords only)
  PyObject* call_with_keywords = nullptr;
};
Hooks hooks;

// PEP 590's vectorcall, as the stable ABI has it from 3.12: the function type,
// the type flag and the bit of nargsf that is not a count. The values are the
// ones CPython has used since 3.8; they are used only on 3.12 and later.
using VectorcallFunc = PyObject* (*)(PyObject*, PyObject* const*, size_t, PyObject*);
constexpr unsigned long kTpFlagsHaveVectorcall = 1UL << 11;
constexpr size_t kVectorcallArgumentsOffset = static_cast<size_t>(1) << (8 * sizeof(size_t) - 1);

struct ObjectBase {
  PyObject ob_base;  // PyObject_HEAD, spelled out for clang-format
  ModrtObjectHandle handle;
  VectorcallFunc vectorcall;  // used by FunctionBase instances
};

// A heap type (the limited API has no static PyTypeObject); set by PyInit.
PyTypeObject* ObjectBaseType = nullptr;

bool IsObject(PyObject* o) {
  return Py_TYPE(o) == ObjectBaseType || PyType_IsSubtype(Py_TYPE(o), ObjectBaseType);
}

// The running interpreter's (major, minor) as a number, e.g. 0x030C.
int RuntimeVersion() {
  const char* v = Py_GetVersion();  // "3.12.4 (main, ...)"
  int major = 0, minor = 0;
  while (*v >= '0' && *v <= '9') major = major * 10 + (*v++ - '0');
  if (*v == '.') ++v;
  while (*v >= '0' && *v <= '9') minor = minor * 10 + (*v++ - '0');
  return (major << 8) | minor;
}

PyObject* CallOne(PyObject* fn, PyObject* arg) {
  return PyObject_CallFunctionObjArgs(fn, arg, nullptr);
}

// Sets the Python error for the thread-local native error message.
PyObject* RaiseLastError() {
  const char* text = ModrtGetLastError();
  PyObject* message = PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(strlen(text)), "replace");
  if (message == nullptr) return nullptr;
  PyObject* exc = CallOne(hooks.error_from_message, message);
  Py_DECREF(message);
  if (exc == nullptr) return nullptr;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
  Py_DECREF(exc);
  return nullptr;
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

// ---- FunctionBase: calls ModrtFunctionCall ----

constexpr Py_ssize_t kInlineArgs = 8;

// Owned Python references that must outlive the native call.
class KeepAlive {
 public:
  ~KeepAlive() {
    if (size_ == 0) return;
    // Releasing a boxed callable runs its Python deleter, which must not see
    // the exception this call may be raising.
    // PyErr_Fetch/PyErr_Restore: PyErr_GetRaisedException is 3.12+.
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    for (Py_ssize_t i = 0; i < size_; ++i) Py_DECREF(items_[i]);
    if (items_ != inline_) PyMem_Free(items_);
    PyErr_Restore(type, value, traceback);
  }
  bool Reserve(Py_ssize_t capacity) {
    if (capacity <= kInlineArgs) return true;
    items_ = static_cast<PyObject**>(PyMem_Malloc(sizeof(PyObject*) * capacity));
    return items_ != nullptr;
  }
  void Add(PyObject* o) { items_[size_++] = o; }

 private:
  PyObject* inline_[kInlineArgs];
  PyObject** items_ = inline_;
  Py_ssize_t size_ = 0;
};

// Writes `arg` as a borrowed argument; what it creates goes to `keep`. The one
// conversion of a Python value to a ModrtValue: arguments of calls here, and
// (write_return) results of Python functions called from native code. Checks
// in order: None, Object, bool/int, float, str, then everything else through
// box_arg.
bool FillArg(PyObject* arg, ModrtValue* slot, KeepAlive* keep) {
  slot->reserved = kModrtNumberExact;
  if (arg == Py_None) {
    slot->type_code = kModrtNone;
    slot->v_int64 = 0;
    return true;
  }
  if (IsObject(arg)) {
    slot->type_code = kModrtObject;
    slot->v_obj = reinterpret_cast<ObjectBase*>(arg)->handle;
    return true;
  }
  if (PyLong_Check(arg)) {
    // Never wrapped: an int beyond int64 is flagged (ModrtNumberFlag) so the
    // callee can refuse it for the type it expects.
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (overflow == 0) {
      if (v == -1 && PyErr_Occurred()) return false;
      slot->type_code = kModrtInt;
      slot->v_int64 = v;
      return true;
    }
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(arg);
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
        slot->type_code = kModrtInt;
        slot->reserved = kModrtNumberUnsigned64;
        std::memcpy(&slot->v_int64, &u, sizeof(u));
        return true;
      }
      PyErr_Clear();
    }
    double d = PyLong_AsDouble(arg);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      d = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
    }
    slot->type_code = kModrtFloat;
    slot->reserved = kModrtNumberWideInt;
    slot->v_float64 = d;
    return true;
  }
  if (PyFloat_Check(arg)) {
    slot->type_code = kModrtFloat;
    slot->v_float64 = PyFloat_AsDouble(arg);
    return true;
  }
  if (PyUnicode_Check(arg)) {
    const char* text =
        PyUnicode_AsUTF8AndSize(arg, nullptr);  // cached by the str, lives as long as it
    if (text == nullptr) return false;
    slot->type_code = kModrtRawStr;
    slot->v_str = text;
    return true;
  }
  PyObject* boxed = CallOne(hooks.box_arg, arg);
  if (boxed == nullptr) return false;
  keep->Add(boxed);
  if (IsObject(boxed)) {
    slot->type_code = kModrtObject;
    slot->v_obj = reinterpret_cast<ObjectBase*>(boxed)->handle;
    return true;
  }
  int device_type = 0, device_id = 0;
  if (!PyArg_ParseTuple(boxed, "ii", &device_type, &device_id)) return false;
  slot->type_code = kModrtDevice;
  slot->v_device.device_type = static_cast<DLDeviceType>(device_type);
  slot->v_device.device_id = device_id;
  return true;
}

// Converts an owned return value (one reference on an object, ours).
PyObject* ToPython(const ModrtValue& v) {
  switch (v.type_code) {
    case kModrtNone: Py_RETURN_NONE;
    case kModrtInt: return PyLong_FromLongLong(v.v_int64);
    case kModrtFloat: return PyFloat_FromDouble(v.v_float64);
    case kModrtOpaquePtr: return PyLong_FromVoidPtr(v.v_ptr);
    case kModrtRawStr: return PyUnicode_FromString(v.v_str);
    case kModrtDevice:
      return PyObject_CallFunction(hooks.make_device, "ii",
                                   static_cast<int>(v.v_device.device_type), v.v_device.device_id);
    case kModrtDLTensorPtr:
      PyErr_SetString(PyExc_TypeError,
                      "borrowed DLTensor arguments cannot be passed to Python functions");
      return nullptr;
    case kModrtObject: {
      ModrtObjectHandle h = v.v_obj;
      if (h == nullptr) Py_RETURN_NONE;
      int32_t type_index = ModrtObjectTypeIndex(h);
      if (type_index == kModrtObjString || type_index == kModrtObjBytes) {
        const char* data = nullptr;
        size_t size = 0;
        PyObject* result = nullptr;
        if (ModrtBytesGet(h, &data, &size) != 0) {
          RaiseLastError();
        } else if (type_index == kModrtObjString) {
          result = PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(size), nullptr);
        } else {
          result = PyBytes_FromStringAndSize(data, static_cast<Py_ssize_t>(size));
        }
        ModrtObjectRelease(h);
        return result;
      }
      PyObject* handle = PyLong_FromVoidPtr(h);
      if (handle == nullptr) {
        ModrtObjectRelease(h);
        return nullptr;
      }
      PyObject* result = CallOne(hooks.wrap_object, handle);
      Py_DECREF(handle);
      return result;
    }
    default:
      return PyErr_Format(PyExc_TypeError, "unknown value type code %d",
                          static_cast<int>(v.type_code));
  }
}

// Calls the native function `callable` with the borrowed arguments args[0, n).
PyObject* CallFunction(PyObject* callable, PyObject* const* args, Py_ssize_t n) {
  ModrtValue inline_values[kInlineArgs];
  ModrtValue* values = inline_values;
  if (n > kInlineArgs) {
    values = static_cast<ModrtValue*>(PyMem_Malloc(sizeof(ModrtValue) * n));
    if (values == nullptr) return PyErr_NoMemory();
  }
  PyObject* result = nullptr;
  {
    KeepAlive keep;
    bool ok = keep.Reserve(n);
    if (!ok) PyErr_NoMemory();
    for (Py_ssize_t i = 0; ok && i < n; ++i) ok = FillArg(args[i], &values[i], &keep);
    if (ok) {
      ModrtObjectHandle handle = reinterpret_cast<ObjectBase*>(callable)->handle;
      ModrtValue ret;
      ret.type_code = kModrtNone;
      int status;
      // Long calls (program builds, copies) must not stall other threads.
      Py_BEGIN_ALLOW_THREADS status =
          ModrtFunctionCall(handle, values, static_cast<int32_t>(n), &ret);
      Py_END_ALLOW_THREADS result = status == 0 ? ToPython(ret) : RaiseLastError();
    }
  }
  if (values != inline_values) PyMem_Free(values);
  return result;
}

// A call with keywords (the slow path): the Python hook orders the values by
// the names the signature declares and calls the function positionally.
PyObject* CallWithKeywords(PyObject* callable, PyObject* args, PyObject* kwargs) {
  return PyObject_CallFunctionObjArgs(hooks.call_with_keywords, callable, args, kwargs, nullptr);
}

// The vectorcall entry (3.12+): the arguments arrive as an array.
PyObject* FunctionVectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  const Py_ssize_t n = static_cast<Py_ssize_t>(nargsf & ~kVectorcallArgumentsOffset);
  if (kwnames == nullptr || PyTuple_Size(kwnames) == 0) return CallFunction(callable, args, n);
  const Py_ssize_t nkw = PyTuple_Size(kwnames);
  PyObject* positional = PyTuple_New(n);
  PyObject* keywords = PyDict_New();
  PyObject* result = nullptr;
  bool ok = positional != nullptr && keywords != nullptr;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    Py_INCREF(args[i]);
    ok = PyTuple_SetItem(positional, i, args[i]) == 0;  // steals the reference
  }
  for (Py_ssize_t i = 0; ok && i < nkw; ++i) {
    ok = PyDict_SetItem(keywords, PyTuple_GetItem(kwnames, i), args[n + i]) == 0;
  }
  if (ok) result = CallWithKeywords(callable, positional, keywords);
  Py_XDECREF(positional);
  Py_XDECREF(keywords);
  return result;
}

// tp_call: every call on 3.10/3.11, and PyObject_Call everywhere.
PyObject* FunctionTpCall(PyObject* callable, PyObject* args, PyObject* kwargs) {
  if (kwargs != nullptr && PyDict_Size(kwargs) != 0) {
    return CallWithKeywords(callable, args, kwargs);
  }
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 0) return nullptr;
  PyObject* inline_args[kInlineArgs];
  PyObject** items = inline_args;
  if (n > kInlineArgs) {
    items = static_cast<PyObject**>(PyMem_Malloc(sizeof(PyObject*) * n));
    if (items == nullptr) return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; ++i)
    items[i] = PyTuple_GetItem(args, i);  // borrowed; the tuple holds them
  PyObject* result = CallFunction(callable, items, n);
  if (items != inline_args) PyMem_Free(items);
  return result;
}

PyObject* FunctionNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = ObjectNew(type, args, kwargs);
  if (self != nullptr) reinterpret_cast<ObjectBase*>(self)->vectorcall = FunctionVectorcall;
  return self;
}

// ---- module ----

// write_return(address, value): `value` as the owned result of a Python
// function called from native code (modrt._ffi's ctypes callback), written to
// the ModrtValue at `address`: converted as an argument is, then a str becomes
// a string object and an object gains the reference the caller owns.
PyObject* WriteReturn(PyObject*, PyObject* args) {
  unsigned long long address = 0;
  PyObject* value = nullptr;
  if (!PyArg_ParseTuple(args, "KO", &address, &value)) return nullptr;
  auto* ret = reinterpret_cast<ModrtValue*>(static_cast<uintptr_t>(address));
  KeepAlive keep;  // a boxed value: its object is retained below before keep lets go
  if (!FillArg(value, ret, &keep)) return nullptr;
  if (ret->type_code == kModrtRawStr) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(value, &size);
    if (text == nullptr) return nullptr;
    ModrtObjectHandle out = nullptr;
    if (ModrtBytesCreate(text, static_cast<size_t>(size), 1, &out) != 0) return RaiseLastError();
    ret->type_code = kModrtObject;
    ret->v_obj = out;
  } else if (ret->type_code == kModrtObject) {
    if (ModrtObjectRetain(ret->v_obj) != 0) return RaiseLastError();
  }
  Py_RETURN_NONE;
}

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

// ---- DLPack capsules. Their destructor runs in C: a capsule is often freed
// while an exception is pending (a consumer that refused it), where no Python
// code may run.

constexpr const char* kLegacy = "dltensor";
constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kUsedLegacy = "used_dltensor";
constexpr const char* kUsedVersioned = "used_dltensor_versioned";

// Runs only if no consumer took the tensor (the capsule kept its name).
void DLPackCapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersioned));
    if (m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, kLegacy)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacy));
    if (m->deleter) m->deleter(m);
  }
}

// to_dlpack(tensor, versioned, flags) -> capsule
PyObject* ToDLPack(PyObject*, PyObject* args) {
  PyObject* tensor;
  int versioned;
  unsigned long long flags;
  if (!PyArg_ParseTuple(args, "OpK", &tensor, &versioned, &flags)) return nullptr;
  if (!IsObject(tensor)) {
    PyErr_SetString(PyExc_TypeError, "to_dlpack takes a modrt tensor");
    return nullptr;
  }
  ModrtObjectHandle handle = reinterpret_cast<ObjectBase*>(tensor)->handle;
  if (versioned) {
    DLManagedTensorVersioned* out = nullptr;
    if (ModrtTensorToDLPackVersioned(handle, flags, &out) != 0) return RaiseLastError();
    PyObject* capsule = PyCapsule_New(out, kVersioned, DLPackCapsuleDestructor);
    if (capsule == nullptr) out->deleter(out);
    return capsule;
  }
  DLManagedTensor* out = nullptr;
  if (ModrtTensorToDLPack(handle, &out) != 0) return RaiseLastError();
  PyObject* capsule = PyCapsule_New(out, kLegacy, DLPackCapsuleDestructor);
  if (capsule == nullptr) out->deleter(out);
  return capsule;
}

// from_dlpack(capsule, copy) -> owned tensor handle (int). The core owns the
// producer's tensor from the call on, on success and failure alike, so the
// capsule is marked used either way.
PyObject* FromDLPack(PyObject*, PyObject* args) {
  PyObject* capsule;
  int copy;
  if (!PyArg_ParseTuple(args, "Op", &capsule, &copy)) return nullptr;
  ModrtObjectHandle out = nullptr;
  int status;
  if (PyCapsule_IsValid(capsule, kVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersioned));
    status = ModrtTensorFromDLPackVersioned(m, copy, &out);
    if (PyCapsule_SetName(capsule, kUsedVersioned) != 0) return nullptr;
  } else if (PyCapsule_IsValid(capsule, kLegacy)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacy));
    status = ModrtTensorFromDLPack(m, copy, &out);
    if (PyCapsule_SetName(capsule, kUsedLegacy) != 0) return nullptr;
  } else {
    // The limited API has no tp_name: the type's __name__ instead.
    PyObject* type_name =
        PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(capsule)), "__name__");
    if (type_name == nullptr) return nullptr;
    PyErr_Format(PyExc_TypeError,
                 "expected a DLPack producer or an unused DLPack capsule ('%s' or '%s'), got %U",
                 kLegacy, kVersioned, type_name);
    Py_DECREF(type_name);
    return nullptr;
  }
  if (status != 0) return RaiseLastError();
  return PyLong_FromVoidPtr(out);
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

PyMODINIT_FUNC PyInit__ffi_ext(void) {
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
  return m;
}
