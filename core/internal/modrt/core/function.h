// Packed functions and the global registry.
#ifndef MODRT_FUNCTION_H_
#define MODRT_FUNCTION_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/core/object.h"

namespace modrt {

MODRT_API const char* TypeCodeName(int32_t type_code);
// "int", "bytes", "tensor", ...: a value's type, objects by their kind.
MODRT_API const char* ValueTypeName(const ModrtValue& v);

// Borrowed view of a call's arguments with checked accessors; a mismatch is a
// TypeError naming the argument.
class MODRT_API Args {
 public:
  Args(const ModrtValue* values, int32_t size) : values_(values), size_(size) {}
  int32_t size() const { return size_; }
  const ModrtValue* values() const { return values_; }
  const ModrtValue& operator[](int32_t i) const { return values_[i]; }

  // Throws TypeError unless exactly `n` arguments (or at least `n` with at_least).
  void ExpectCount(int32_t n, const char* func, bool at_least = false) const;
  int64_t Int(int32_t i) const;
  double Float(int32_t i) const;            // accepts ints too
  std::string_view Str(int32_t i) const;    // raw strings or String objects
  std::string_view Bytes(int32_t i) const;  // Bytes or String objects
  DLDevice Device(int32_t i) const;
  DLTensor* Tensor(int32_t i) const;  // borrowed DLTensor* or Tensor objects
  void* Ptr(int32_t i) const;
  Object* Obj(int32_t i, int32_t type_index, const char* what) const;

 private:
  const ModrtValue* values_;
  int32_t size_;
};

// Writes a call's return value. Objects are handed over with one reference.
class MODRT_API Ret {
 public:
  explicit Ret(ModrtValue* value) : value_(value) { value_->type_code = kModrtNone; }
  void SetInt(int64_t v);
  void SetFloat(double v);
  void SetStr(std::string v);
  void SetBytes(std::string v);
  void SetPtr(void* v);
  void SetDevice(DLDevice v);
  void SetObject(Ref<Object> obj);
  // Takes over a value returned through the C ABI (an object with its reference).
  void Adopt(const ModrtValue& v) { *value_ = v; }

 private:
  ModrtValue* value_;
};

using PackedBody = std::function<void(const Args& args, Ret* ret)>;
// The C-level calling convention, for functions defined outside C++.
using RawBody = std::function<void(const ModrtValue* args, int32_t num_args, ModrtValue* ret)>;

class MODRT_API FunctionObj : public Object {
 public:
  explicit FunctionObj(PackedBody body) : packed_(std::move(body)) {}
  explicit FunctionObj(RawBody body) : raw_(std::move(body)) {}
  int32_t type_index() const final { return kModrtObjFunction; }
  // Throws modrt::Error on failure; `ret` is written only on success.
  void Call(const ModrtValue* args, int32_t num_args, ModrtValue* ret) const {
    // One of the two is set; calling it directly saves a wrapper per call.
    if (packed_) {
      Ret r(ret);
      packed_(Args(args, num_args), &r);
    } else {
      raw_(args, num_args, ret);
    }
  }

 private:
  PackedBody packed_;
  RawBody raw_;
};

// Rebuilds the Error a C call reported through ModrtSetLastError
// ("Kind: message"), so it can cross back into C++ unchanged.
[[noreturn]] MODRT_API void ThrowLastError();

// An owned return value: releases a returned object when it goes.
class MODRT_API OwnedValue {
 public:
  OwnedValue() { value_.type_code = kModrtNone; }
  OwnedValue(const OwnedValue&) = delete;
  OwnedValue& operator=(const OwnedValue&) = delete;
  ~OwnedValue();
  ModrtValue* out() { return &value_; }
  const ModrtValue& value() const { return value_; }
  // Takes the returned object out (null if it is not one).
  Ref<Object> TakeObject();

 private:
  ModrtValue value_;
};

inline ModrtValue IntValue(int64_t v) {
  ModrtValue r{};
  r.type_code = kModrtInt;
  r.v_int64 = v;
  return r;
}
inline ModrtValue ObjValue(Object* obj) {
  ModrtValue r{};
  r.type_code = kModrtObject;
  r.v_obj = obj;
  return r;
}

MODRT_API void RegisterGlobal(const std::string& name, PackedBody body,
                              bool allow_override = false);
// Null when absent.
MODRT_API Ref<FunctionObj> GetGlobal(const std::string& name);
MODRT_API std::vector<std::string> ListGlobals();

// Runs `body` when the containing shared object is loaded. For the core and
// libmodrt_compiler.so only; plugins register from their init (plugin.h).
struct StaticInit {
  explicit StaticInit(void (*body)()) { body(); }
};
#define MODRT_STATIC_INIT_CAT2(a, b) a##b
#define MODRT_STATIC_INIT_CAT(a, b) MODRT_STATIC_INIT_CAT2(a, b)
#define MODRT_STATIC_INIT(body) \
  static const ::modrt::StaticInit MODRT_STATIC_INIT_CAT(modrt_static_init_, __COUNTER__)(body)

}  // namespace modrt

#endif  // MODRT_FUNCTION_H_
