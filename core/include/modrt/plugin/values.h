// Values crossing between a plugin and the core: owned references to core
// objects, checked views of a call's arguments and its return value, and
// functions in the core's global registry.
#ifndef MODRT_PLUGIN_VALUES_H_
#define MODRT_PLUGIN_VALUES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "modrt/plugin/errors.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

// An owned reference to a core object (string, bytes, function, module,
// tensor, payload).
class ObjectRef {
 public:
  ObjectRef() = default;
  ObjectRef(std::nullptr_t) {}  // NOLINT(runtime/explicit)
  // Takes over a reference the caller already owns.
  static ObjectRef Adopt(ModrtObjectHandle h) {
    ObjectRef r;
    r.h_ = h;
    return r;
  }
  // Takes a new reference to a borrowed handle.
  static ObjectRef Borrow(ModrtObjectHandle h) {
    if (h != nullptr) Core().object_retain(h);
    return Adopt(h);
  }
  ObjectRef(const ObjectRef& other) : ObjectRef(Borrow(other.h_)) {}
  ObjectRef(ObjectRef&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  ObjectRef& operator=(ObjectRef other) noexcept {
    std::swap(h_, other.h_);
    return *this;
  }
  ~ObjectRef() {
    if (h_ != nullptr) Core().object_release(h_);
  }
  ModrtObjectHandle get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }
  // Hands the reference to a C caller.
  ModrtObjectHandle release() { return std::exchange(h_, nullptr); }

 private:
  ModrtObjectHandle h_ = nullptr;
};

inline ObjectRef MakeBytes(std::string_view data, bool is_string = false) {
  ModrtObjectHandle out = nullptr;
  Check(Core().bytes_create(data.data(), data.size(), is_string ? 1 : 0, &out));
  return ObjectRef::Adopt(out);
}
inline ObjectRef MakeString(std::string_view text) { return MakeBytes(text, true); }
// The contents of a string or bytes object (borrowed from it).
inline std::string_view BytesOf(ModrtObjectHandle obj) {
  const char* data = nullptr;
  size_t size = 0;
  Check(Core().bytes_get(obj, &data, &size));
  return std::string_view(data, size);
}

inline std::string DTypeToString(DLDataType dtype) {
  ModrtObjectHandle out = nullptr;
  Check(Core().dtype_to_string(dtype, &out));
  ObjectRef text = ObjectRef::Adopt(out);
  return std::string(BytesOf(text.get()));
}
using common::operator==;
// "cpu", "opencl", ...; null when no backend names `type`.
inline const char* DeviceKindName(DLDeviceType type) { return Core().device_kind_name(type); }

using common::IsContiguous;
using common::TensorBytes;

// Borrowed view of a call's arguments with checked accessors; a mismatch is a
// TypeError naming the argument.
class Args {
 public:
  Args(const ModrtValue* values, int32_t size) : values_(values), size_(size) {}
  int32_t size() const { return size_; }
  const ModrtValue* values() const { return values_; }
  const ModrtValue& operator[](int32_t i) const { return values_[i]; }

  // TypeError unless exactly `n` arguments (or at least `n` with at_least).
  void ExpectCount(int32_t n, const char* func, bool at_least = false) const {
    if (at_least ? size_ < n : size_ != n) {
      Fail("TypeError", func, " expects ", at_least ? "at least " : "", n, " argument",
           n == 1 ? "" : "s", ", got ", size_);
    }
  }
  // The number readers honour ModrtNumberFlag as the core's do: an integer
  // int64 cannot hold is an OverflowError, never its wrapped bits.
  int64_t Int(int32_t i) const {
    const ModrtValue& v = values_[i];
    if ((v.type_code == kModrtInt && v.reserved == kModrtNumberUnsigned64) ||
        (v.type_code == kModrtFloat && v.reserved == kModrtNumberWideInt)) {
      Fail("OverflowError", "argument ", i, ": an integer outside the int64 range");
    }
    if (v.type_code != kModrtInt) Mismatch(i, "int");
    return v.v_int64;
  }
  double Float(int32_t i) const {  // accepts ints too
    const ModrtValue& v = values_[i];
    if (v.type_code == kModrtFloat) return v.v_float64;
    if (v.type_code == kModrtInt && v.reserved == kModrtNumberUnsigned64) {
      return static_cast<double>(static_cast<uint64_t>(v.v_int64));
    }
    if (v.type_code == kModrtInt) return static_cast<double>(v.v_int64);
    Mismatch(i, "float");
  }
  std::string_view Str(int32_t i) const {  // raw strings or string objects
    const ModrtValue& v = values_[i];
    if (v.type_code == kModrtRawStr) return v.v_str;
    if (ObjectType(v) == kModrtObjString) return BytesOf(v.v_obj);
    Mismatch(i, "str");
  }
  std::string_view Bytes(int32_t i) const {  // bytes or string objects
    const ModrtValue& v = values_[i];
    int32_t t = ObjectType(v);
    if (t == kModrtObjBytes || t == kModrtObjString) return BytesOf(v.v_obj);
    Mismatch(i, "bytes");
  }
  DLDevice Device(int32_t i) const {
    if (values_[i].type_code != kModrtDevice) Mismatch(i, "device");
    return values_[i].v_device;
  }
  DLTensor* Tensor(int32_t i) const {  // borrowed DLTensor* or tensor objects
    const ModrtValue& v = values_[i];
    if (v.type_code == kModrtDLTensorPtr && v.v_tensor != nullptr) return v.v_tensor;
    if (ObjectType(v) == kModrtObjTensor) {
      DLTensor* t = nullptr;
      Check(Core().tensor_get_dltensor(v.v_obj, &t));
      return t;
    }
    Mismatch(i, "tensor");
  }
  void* Ptr(int32_t i) const {
    if (values_[i].type_code == kModrtOpaquePtr) return values_[i].v_ptr;
    if (values_[i].type_code == kModrtInt) return reinterpret_cast<void*>(values_[i].v_int64);
    Mismatch(i, "pointer");
  }
  // A borrowed object of `type_index` (ModrtObjectType).
  ModrtObjectHandle Obj(int32_t i, int32_t type_index, const char* what) const {
    if (ObjectType(values_[i]) != type_index) Mismatch(i, what);
    return values_[i].v_obj;
  }

 private:
  static int32_t ObjectType(const ModrtValue& v) {
    return v.type_code == kModrtObject && v.v_obj != nullptr ? Core().object_type_index(v.v_obj)
                                                             : -1;
  }
  [[noreturn]] void Mismatch(int32_t i, const char* expected) const {
    static const char* const kTypeNames[] = {"None",   "int",      "float", "pointer",
                                             "device", "DLTensor", "str"};
    static const char* const kObjectNames[] = {"object", "str",    "bytes",  "function",
                                               "module", "tensor", "payload"};
    const ModrtValue& v = values_[i];
    const char* got = "unknown";
    if (v.type_code == kModrtObject) {
      int32_t t = ObjectType(v);
      got = t >= 1 && t <= kModrtObjPayload ? kObjectNames[t] : "object";
    } else if (v.type_code >= 0 && v.type_code < kModrtObject) {
      got = kTypeNames[v.type_code];
    }
    Fail("TypeError", "argument ", i, ": expected ", expected, ", got ", got);
  }

  const ModrtValue* values_;
  int32_t size_;
};

// Writes a call's return value. Objects are handed over with one reference.
class Ret {
 public:
  explicit Ret(ModrtValue* value) : value_(value) { value_->type_code = kModrtNone; }
  void SetInt(int64_t v) {
    value_->type_code = kModrtInt;
    value_->v_int64 = v;
  }
  void SetFloat(double v) {
    value_->type_code = kModrtFloat;
    value_->v_float64 = v;
  }
  void SetStr(std::string_view v) { SetObject(MakeString(v)); }
  void SetBytes(std::string_view v) { SetObject(MakeBytes(v)); }
  void SetPtr(void* v) {
    value_->type_code = kModrtOpaquePtr;
    value_->v_ptr = v;
  }
  void SetDevice(DLDevice v) {
    value_->type_code = kModrtDevice;
    value_->v_device = v;
  }
  void SetObject(ObjectRef obj) {
    if (!obj) {
      value_->type_code = kModrtNone;
      return;
    }
    value_->type_code = kModrtObject;
    value_->v_obj = obj.release();
  }

 private:
  ModrtValue* value_;
};

// An owned return value of a call into the core: releases a returned object.
class OwnedValue {
 public:
  OwnedValue() { value_.type_code = kModrtNone; }
  OwnedValue(const OwnedValue&) = delete;
  OwnedValue& operator=(const OwnedValue&) = delete;
  ~OwnedValue() {
    if (value_.type_code == kModrtObject && value_.v_obj != nullptr)
      Core().object_release(value_.v_obj);
  }
  ModrtValue* out() { return &value_; }
  const ModrtValue& value() const { return value_; }

 private:
  ModrtValue value_;
};

using PackedBody = std::function<void(const Args& args, Ret* ret)>;

namespace internal {
inline int CallPacked(void* resource, const ModrtValue* args, int32_t num_args, ModrtValue* ret) {
  return GuardCall([&] {
    Ret r(ret);
    (*static_cast<const PackedBody*>(resource))(Args(args, num_args), &r);
  });
}
inline void DeletePacked(void* resource) { delete static_cast<PackedBody*>(resource); }
}  // namespace internal

// A function object whose calls run `body`.
inline ObjectRef MakeFunction(PackedBody body) {
  auto owned = std::make_unique<PackedBody>(std::move(body));
  ModrtObjectHandle out = nullptr;
  Check(Core().function_create(&internal::CallPacked, owned.get(), &internal::DeletePacked, &out));
  owned.release();  // the function object owns it now
  return ObjectRef::Adopt(out);
}

inline void RegisterGlobal(const std::string& name, PackedBody body, bool allow_override = false) {
  ObjectRef f = MakeFunction(std::move(body));
  Check(Core().register_global(name.c_str(), f.get(), allow_override ? 1 : 0));
}

// Null when absent.
inline ObjectRef GetGlobal(const std::string& name) {
  ModrtObjectHandle out = nullptr;
  Check(Core().get_global(name.c_str(), &out));
  return ObjectRef::Adopt(out);
}

inline void CallFunction(const ObjectRef& f, const ModrtValue* args, int32_t num_args,
                         OwnedValue* ret) {
  Check(Core().function_call(f.get(), args, num_args, ret->out()));
}

// The load-time configuration value for `key` (plugin_api.h: load_option),
// read while the plugin registers (its init function): nullopt when the
// loader gave none, or the core predates load options.
inline std::optional<std::string> LoadOption(const char* key) {
  const ModrtCoreApi& core = Core();
  if (!MODRT_CORE_HAS(&core, load_option)) return std::nullopt;
  ModrtObjectHandle out = nullptr;
  Check(core.load_option(key, &out));
  if (out == nullptr) return std::nullopt;
  ObjectRef value = ObjectRef::Adopt(out);
  return std::string(BytesOf(value.get()));
}

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_VALUES_H_
