// modrt._ffi_ext: Python values to ModrtValue and back, the one conversion
// for the arguments of calls from Python and the results of Python functions
// called from native code.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ffi_ext.h"

namespace modrt_ffi {

namespace {

PyObject* CallOne(PyObject* fn, PyObject* arg) {
  return PyObject_CallFunctionObjArgs(fn, arg, nullptr);
}

}  // namespace

PyObject* RaiseLastError() {
  const char* text = ModrtGetLastError();
  static constexpr char kInterrupted[] = "KeyboardInterrupt: ";
  if (strncmp(text, kInterrupted, sizeof(kInterrupted) - 1) == 0 && RestoreHandlerError()) {
    return nullptr;
  }
  PyObject* message = PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(strlen(text)), "replace");
  if (message == nullptr) return nullptr;
  PyObject* exc = CallOne(hooks.error_from_message, message);
  Py_DECREF(message);
  if (exc == nullptr) return nullptr;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
  Py_DECREF(exc);
  return nullptr;
}

void KeepAlive::Release() {
  // Releasing a boxed callable runs its Python deleter, which must not see
  // the exception this call may be raising.
  // PyErr_Fetch/PyErr_Restore: PyErr_GetRaisedException is 3.12+.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  for (Py_ssize_t i = 0; i < size_; ++i) Py_DECREF(items_[i]);
  if (items_ != inline_) PyMem_Free(items_);
  PyErr_Restore(type, value, traceback);
}

bool KeepAlive::ReserveHeap(Py_ssize_t capacity) {
  items_ = static_cast<PyObject**>(PyMem_Malloc(sizeof(PyObject*) * capacity));
  return items_ != nullptr;
}

// The one conversion of a Python value to a ModrtValue: arguments of calls here, and
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

}  // namespace modrt_ffi
