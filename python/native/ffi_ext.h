// modrt._ffi_ext's shared declarations: the object layout, the Python hooks,
// and the conversions between Python values and ModrtValue (ffi_values.cc),
// used by the calls (ffi_calls.cc), DLPack (ffi_dlpack.cc) and the module
// (ffi_ext.cc). Every source defines Py_LIMITED_API through this header, so
// the one binary keeps to CPython 3.10's stable ABI.
#ifndef MODRT_PYTHON_NATIVE_FFI_EXT_H_
#define MODRT_PYTHON_NATIVE_FFI_EXT_H_

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstddef>

#include "modrt/abi/c_api.h"

namespace modrt_ffi {

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
extern Hooks hooks;

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
extern PyTypeObject* ObjectBaseType;

inline bool IsObject(PyObject* o) {
  return Py_TYPE(o) == ObjectBaseType || PyType_IsSubtype(Py_TYPE(o), ObjectBaseType);
}

// Sets the Python error for the thread-local native error message; returns null.
PyObject* RaiseLastError();

constexpr Py_ssize_t kInlineArgs = 8;

// Owned Python references that must outlive the native call.
class KeepAlive {
 public:
  KeepAlive() = default;
  KeepAlive(const KeepAlive&) = delete;
  KeepAlive& operator=(const KeepAlive&) = delete;
  // Inline: most calls (a launch, a no-op) keep nothing alive.
  ~KeepAlive() {
    if (size_ != 0 || items_ != inline_) Release();
  }
  bool Reserve(Py_ssize_t capacity) { return capacity <= kInlineArgs || ReserveHeap(capacity); }
  void Add(PyObject* o) { items_[size_++] = o; }

 private:
  void Release();
  bool ReserveHeap(Py_ssize_t capacity);

  PyObject* inline_[kInlineArgs];
  PyObject** items_ = inline_;
  Py_ssize_t size_ = 0;
};

// Writes `arg` as a borrowed argument; what it creates goes to `keep`.
bool FillArg(PyObject* arg, ModrtValue* slot, KeepAlive* keep);
// Converts an owned return value (one reference on an object, ours).
PyObject* ToPython(const ModrtValue& v);

// The vectorcall and tp_call entries of FunctionBase (ffi_calls.cc).
PyObject* FunctionVectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames);
PyObject* FunctionTpCall(PyObject* callable, PyObject* args, PyObject* kwargs);
// Lets the core release the GIL where a call blocks (ModrtSetWaitHooks).
void InstallWaitHooks();
// Raises the exception a signal handler raised in the native wait that just
// ended with KeyboardInterrupt, if it raised one of another kind.
bool RestoreHandlerError();

// Module functions (METH_VARARGS).
PyObject* WriteReturn(PyObject*, PyObject* args);
PyObject* ToDLPack(PyObject*, PyObject* args);
PyObject* FromDLPack(PyObject*, PyObject* args);

}  // namespace modrt_ffi

#endif  // MODRT_PYTHON_NATIVE_FFI_EXT_H_
