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
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "modrt/c_api.h"

namespace {

// Python callables from modrt._ffi (set once by init()).
struct Hooks {
  PyObject* box_arg = nullptr;        // arg -> Object (kept alive) or (device_type, device_id)
  PyObject* wrap_object = nullptr;    // owned handle (int) -> Object of its class
  PyObject* make_device = nullptr;    // (device_type, device_id) -> Device
  PyObject* error_from_message = nullptr;  // str -> exception instance
};
Hooks hooks;

struct ObjectBase {
  PyObject_HEAD
  ModrtObjectHandle handle;
  vectorcallfunc vectorcall;  // used by FunctionBase instances
};

PyTypeObject ObjectBaseType = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject FunctionBaseType = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool IsObject(PyObject* o) { return PyObject_TypeCheck(o, &ObjectBaseType); }

// Sets the Python error for the thread-local native error message.
PyObject* RaiseLastError() {
  const char* text = ModrtGetLastError();
  PyObject* message = PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(strlen(text)), "replace");
  if (message == nullptr) return nullptr;
  PyObject* exc = PyObject_CallOneArg(hooks.error_from_message, message);
  Py_DECREF(message);
  if (exc == nullptr) return nullptr;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
  Py_DECREF(exc);
  return nullptr;
}

// ---- ObjectBase: an owned reference to a native object ----

PyObject* ObjectNew(PyTypeObject* type, PyObject*, PyObject*) {
  auto* self = reinterpret_cast<ObjectBase*>(type->tp_alloc(type, 0));
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
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", const_cast<char**>(kwlist), &handle)) return -1;
  return SetHandle(reinterpret_cast<ObjectBase*>(self), handle);
}

void ObjectDealloc(PyObject* self) {
  auto* obj = reinterpret_cast<ObjectBase*>(self);
  if (obj->handle != nullptr) {
    ModrtObjectRelease(obj->handle);
    obj->handle = nullptr;
  }
  // Python subclasses come through subtype_dealloc, which drops their type.
  Py_TYPE(self)->tp_free(self);
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
    PyObject* raised = PyErr_GetRaisedException();
    for (Py_ssize_t i = 0; i < size_; ++i) Py_DECREF(items_[i]);
    if (items_ != inline_) PyMem_Free(items_);
    PyErr_SetRaisedException(raised);
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

// Writes `arg` as a borrowed argument; what it creates goes to `keep`.
// Mirrors the order of checks of _ffi's ctypes-era conversion: None, Object,
// bool/int, float, str, then everything else through box_arg.
bool FillArg(PyObject* arg, ModrtValue* slot, KeepAlive* keep) {
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
    // Wraps to 64 bits like the c_int64 field it replaces.
    unsigned long long v = PyLong_AsUnsignedLongLongMask(arg);
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
    slot->type_code = kModrtInt;
    slot->v_int64 = static_cast<int64_t>(v);
    return true;
  }
  if (PyFloat_Check(arg)) {
    slot->type_code = kModrtFloat;
    slot->v_float64 = PyFloat_AS_DOUBLE(arg);
    return true;
  }
  if (PyUnicode_Check(arg)) {
    const char* text = PyUnicode_AsUTF8(arg);  // cached by the str, lives as long as it
    if (text == nullptr) return false;
    slot->type_code = kModrtRawStr;
    slot->v_str = text;
    return true;
  }
  PyObject* boxed = PyObject_CallOneArg(hooks.box_arg, arg);
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
      return PyObject_CallFunction(hooks.make_device, "ii", static_cast<int>(v.v_device.device_type),
                                   v.v_device.device_id);
    case kModrtDLTensorPtr:
      PyErr_SetString(PyExc_TypeError, "borrowed DLTensor arguments cannot be passed to Python functions");
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
      PyObject* result = PyObject_CallOneArg(hooks.wrap_object, handle);
      Py_DECREF(handle);
      return result;
    }
    default:
      return PyErr_Format(PyExc_TypeError, "unknown value type code %d", static_cast<int>(v.type_code));
  }
}

PyObject* FunctionVectorcall(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0) {
    PyErr_SetString(PyExc_TypeError, "modrt functions take positional arguments only");
    return nullptr;
  }
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
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
      Py_BEGIN_ALLOW_THREADS
      status = ModrtFunctionCall(handle, values, static_cast<int32_t>(n), &ret);
      Py_END_ALLOW_THREADS
      result = status == 0 ? ToPython(ret) : RaiseLastError();
    }
  }
  if (values != inline_values) PyMem_Free(values);
  return result;
}

PyObject* FunctionNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = ObjectNew(type, args, kwargs);
  if (self != nullptr) reinterpret_cast<ObjectBase*>(self)->vectorcall = FunctionVectorcall;
  return self;
}

// ---- module ----

PyObject* Init(PyObject*, PyObject* args) {
  Hooks next;
  if (!PyArg_ParseTuple(args, "OOOO", &next.box_arg, &next.wrap_object, &next.make_device,
                        &next.error_from_message)) {
    return nullptr;
  }
  for (PyObject* o : {next.box_arg, next.wrap_object, next.make_device, next.error_from_message}) {
    Py_INCREF(o);
  }
  for (PyObject* o : {hooks.box_arg, hooks.wrap_object, hooks.make_device, hooks.error_from_message}) {
    Py_XDECREF(o);
  }
  hooks = next;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"init", Init, METH_VARARGS,
     "init(box_arg, wrap_object, make_device, error_from_message): the Python halves of conversion."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "modrt._ffi_ext", "Fast calls into the modrt C ABI.", -1, methods,
    nullptr,  // m_slots
    nullptr,  // m_traverse
    nullptr,  // m_clear
    nullptr,  // m_free
};

}  // namespace

PyMODINIT_FUNC PyInit__ffi_ext(void) {
  ObjectBaseType.tp_name = "modrt._ffi_ext.ObjectBase";
  ObjectBaseType.tp_basicsize = sizeof(ObjectBase);
  ObjectBaseType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  ObjectBaseType.tp_doc = "An owned reference to a native modrt object.";
  ObjectBaseType.tp_new = ObjectNew;
  ObjectBaseType.tp_init = ObjectInit;
  ObjectBaseType.tp_dealloc = ObjectDealloc;
  ObjectBaseType.tp_getset = object_getset;
  ObjectBaseType.tp_vectorcall_offset = offsetof(ObjectBase, vectorcall);

  FunctionBaseType.tp_name = "modrt._ffi_ext.FunctionBase";
  FunctionBaseType.tp_basicsize = sizeof(ObjectBase);
  FunctionBaseType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL;
  FunctionBaseType.tp_doc = "A callable native modrt function.";
  FunctionBaseType.tp_base = &ObjectBaseType;
  FunctionBaseType.tp_new = FunctionNew;
  FunctionBaseType.tp_call = PyVectorcall_Call;
  FunctionBaseType.tp_vectorcall_offset = offsetof(ObjectBase, vectorcall);

  if (PyType_Ready(&ObjectBaseType) < 0 || PyType_Ready(&FunctionBaseType) < 0) return nullptr;
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  if (PyModule_AddObjectRef(m, "ObjectBase", reinterpret_cast<PyObject*>(&ObjectBaseType)) < 0 ||
      PyModule_AddObjectRef(m, "FunctionBase", reinterpret_cast<PyObject*>(&FunctionBaseType)) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
