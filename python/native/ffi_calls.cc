// modrt._ffi_ext: calling a native function from Python, and the GIL.
//
// A call keeps the GIL: most calls (a launch, a registry lookup, a tensor's
// metadata) take well under a microsecond, and letting the GIL go and taking
// it back would cost most of that. Only the parts of a call that can block
// let it go: the core calls the wait hooks installed here around each of
// them (ModrtSetWaitHooks: bounded waits, a launch held back at the in-flight
// limit, device syncs, large synchronous copies, module builds), so a thread
// that waits never stalls the interpreter's other threads.
#include "ffi_ext.h"

namespace modrt_ffi {

namespace {

// Whether this thread holds the GIL inside a call made here, so that a wait
// the core reaches may let it go. False on threads the core runs itself (a
// stream's worker), in calls that come through ctypes (which let the GIL go
// already), and while a wait has let it go.
// Initial-exec: a static TLS slot, read without a call to __tls_get_addr on
// every call (this library is dlopen'ed; one bool fits glibc's surplus).
__attribute__((tls_model("initial-exec"))) thread_local bool holds_gil_in_call = false;

void* ReleaseForWait() {
  if (!holds_gil_in_call) return nullptr;
  holds_gil_in_call = false;
  return PyEval_SaveThread();
}

void RetakeAfterWait(void* token) {
  if (token == nullptr) return;
  PyEval_RestoreThread(static_cast<PyThreadState*>(token));
  holds_gil_in_call = true;
}

// An exception a signal handler raised in a native wait, other than
// KeyboardInterrupt: raised in place of the core's error that ended the wait.
struct HandlerError {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
};
thread_local HandlerError handler_error;

// Between the slices of a long native wait, on the waiting thread: runs
// Python's signal handlers (the main thread's, which is where they run), so
// Ctrl-C ends the wait. The core then ends the wait with a KeyboardInterrupt
// naming what it waited for; a handler that raised something else (a test
// runner's timeout) gets its own exception back (RaiseLastError). Threads
// the core runs itself, and ctypes calls, are not asked.
int32_t InterruptRequested() {
  if (!holds_gil_in_call) return 0;
  if (PyErr_CheckSignals() == 0) return 0;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  Py_XDECREF(handler_error.type);
  Py_XDECREF(handler_error.value);
  Py_XDECREF(handler_error.traceback);
  handler_error = HandlerError{};
  if (PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
  } else {
    handler_error = HandlerError{type, value, traceback};
  }
  return 1;
}

// Calls the native function whose handle `callable` holds with `values` and
// converts its result. None, what launches and most calls return, is answered
// here without the general conversion.
PyObject* Invoke(PyObject* callable, const ModrtValue* values, Py_ssize_t n) {
  ModrtObjectHandle handle = reinterpret_cast<ObjectBase*>(callable)->handle;
  ModrtValue ret;
  ret.type_code = kModrtNone;
  // Nested calls (a Python function called from native code that calls
  // back in) restore the outer call's state.
  const bool outer = holds_gil_in_call;
  holds_gil_in_call = true;
  const int status = ModrtFunctionCall(handle, values, static_cast<int32_t>(n), &ret);
  holds_gil_in_call = outer;
  if (status != 0) return RaiseLastError();
  if (ret.type_code == kModrtNone) Py_RETURN_NONE;
  return ToPython(ret);
}

// A call with more arguments than fit the stack: values and references on the heap.
__attribute__((noinline)) PyObject* CallWithManyArgs(PyObject* callable, PyObject* const* args,
                                                     Py_ssize_t n) {
  auto* values = static_cast<ModrtValue*>(PyMem_Malloc(sizeof(ModrtValue) * n));
  if (values == nullptr) return PyErr_NoMemory();
  PyObject* result = nullptr;
  {
    KeepAlive keep;
    bool ok = keep.Reserve(n);
    if (!ok) PyErr_NoMemory();
    for (Py_ssize_t i = 0; ok && i < n; ++i) ok = FillArg(args[i], &values[i], &keep);
    if (ok) result = Invoke(callable, values, n);
  }
  PyMem_Free(values);
  return result;
}

// Calls the native function `callable` with the borrowed arguments args[0, n).
PyObject* CallFunction(PyObject* callable, PyObject* const* args, Py_ssize_t n) {
  if (n > kInlineArgs) return CallWithManyArgs(callable, args, n);
  ModrtValue values[kInlineArgs];
  KeepAlive keep;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!FillArg(args[i], &values[i], &keep)) return nullptr;
  }
  return Invoke(callable, values, n);
}

// A call with keywords (the slow path): the Python hook orders the values by
// the names the signature declares and calls the function positionally.
PyObject* CallWithKeywords(PyObject* callable, PyObject* args, PyObject* kwargs) {
  return PyObject_CallFunctionObjArgs(hooks.call_with_keywords, callable, args, kwargs, nullptr);
}

}  // namespace

bool RestoreHandlerError() {
  if (handler_error.type == nullptr) return false;
  PyErr_Restore(handler_error.type, handler_error.value, handler_error.traceback);
  handler_error = HandlerError{};
  return true;
}

void InstallWaitHooks() {
  ModrtSetWaitHooks(&ReleaseForWait, &RetakeAfterWait);
  ModrtSetInterruptCheck(&InterruptRequested);
}

// The vectorcall entry (3.12+): the arguments arrive as an array.
PyObject* FunctionVectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  const Py_ssize_t n = static_cast<Py_ssize_t>(nargsf & ~kVectorcallArgumentsOffset);
  if (kwnames == nullptr) return CallFunction(callable, args, n);
  const Py_ssize_t nkw = PyTuple_Size(kwnames);
  if (nkw == 0) return CallFunction(callable, args, n);
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

}  // namespace modrt_ffi
