// modrt._ffi_ext: DLPack capsules of modrt tensors, and tensors adopting
// capsules. The capsules' destructor runs in C: a capsule is often freed
// while an exception is pending (a consumer that refused it), where no
// Python code may run.
#include "ffi_ext.h"

namespace modrt_ffi {

namespace {

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

}  // namespace

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

}  // namespace modrt_ffi
