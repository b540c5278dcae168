#include "modrt/core/function.h"

#include <map>
#include <mutex>
#include <shared_mutex>

#include "modrt/core/device.h"

namespace modrt {

const char* TypeCodeName(int32_t type_code) {
  switch (type_code) {
    case kModrtNone: return "None";
    case kModrtInt: return "int";
    case kModrtFloat: return "float";
    case kModrtOpaquePtr: return "pointer";
    case kModrtDevice: return "device";
    case kModrtDLTensorPtr: return "DLTensor";
    case kModrtRawStr: return "str";
    case kModrtObject: return "object";
    default: return "unknown";
  }
}

namespace {

const char* ObjectTypeName(int32_t type_index) {
  switch (type_index) {
    case kModrtObjString: return "str";
    case kModrtObjBytes: return "bytes";
    case kModrtObjFunction: return "function";
    case kModrtObjModule: return "module";
    case kModrtObjTensor: return "tensor";
    case kModrtObjPayload: return "payload";
    default: return "object";
  }
}

}  // namespace

const char* ValueTypeName(const ModrtValue& v) {
  if (v.type_code == kModrtObject && v.v_obj != nullptr) {
    return ObjectTypeName(static_cast<Object*>(v.v_obj)->type_index());
  }
  return TypeCodeName(v.type_code);
}

void Args::ExpectCount(int32_t n, const char* func, bool at_least) const {
  if (at_least ? size_ < n : size_ != n) {
    Fail("TypeError", func, " expects ", at_least ? "at least " : "", n, " argument",
         n == 1 ? "" : "s", ", got ", size_);
  }
}

#define MODRT_ARG_MISMATCH(i, expected) \
  Fail("TypeError", "argument ", i, ": expected ", expected, ", got ", ValueTypeName(values_[i]))

int64_t Args::Int(int32_t i) const {
  const ModrtValue& v = values_[i];
  if ((v.type_code == kModrtInt && v.reserved == kModrtNumberUnsigned64) ||
      (v.type_code == kModrtFloat && v.reserved == kModrtNumberWideInt)) {
    Fail("OverflowError", "argument ", i, ": an integer outside the int64 range");
  }
  if (v.type_code != kModrtInt) MODRT_ARG_MISMATCH(i, "int");
  return v.v_int64;
}

double Args::Float(int32_t i) const {
  const ModrtValue& v = values_[i];
  if (v.type_code == kModrtFloat) return v.v_float64;
  if (v.type_code == kModrtInt && v.reserved == kModrtNumberUnsigned64) {
    return static_cast<double>(static_cast<uint64_t>(v.v_int64));
  }
  if (v.type_code == kModrtInt) return static_cast<double>(v.v_int64);
  MODRT_ARG_MISMATCH(i, "float");
}

std::string_view Args::Str(int32_t i) const {
  const ModrtValue& v = values_[i];
  if (v.type_code == kModrtRawStr) return v.v_str;
  if (v.type_code == kModrtObject && v.v_obj != nullptr &&
      static_cast<Object*>(v.v_obj)->type_index() == kModrtObjString) {
    return static_cast<BytesObj*>(v.v_obj)->data();
  }
  MODRT_ARG_MISMATCH(i, "str");
}

std::string_view Args::Bytes(int32_t i) const {
  const ModrtValue& v = values_[i];
  if (v.type_code == kModrtObject && v.v_obj != nullptr) {
    int32_t t = static_cast<Object*>(v.v_obj)->type_index();
    if (t == kModrtObjBytes || t == kModrtObjString) {
      return static_cast<BytesObj*>(v.v_obj)->data();
    }
  }
  MODRT_ARG_MISMATCH(i, "bytes");
}

DLDevice Args::Device(int32_t i) const {
  if (values_[i].type_code != kModrtDevice) MODRT_ARG_MISMATCH(i, "device");
  return values_[i].v_device;
}

DLTensor* Args::Tensor(int32_t i) const {
  const ModrtValue& v = values_[i];
  if (v.type_code == kModrtDLTensorPtr && v.v_tensor != nullptr) return v.v_tensor;
  if (v.type_code == kModrtObject && v.v_obj != nullptr &&
      static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor) {
    return static_cast<TensorObj*>(v.v_obj)->dl();
  }
  MODRT_ARG_MISMATCH(i, "tensor");
}

void* Args::Ptr(int32_t i) const {
  if (values_[i].type_code == kModrtOpaquePtr) return values_[i].v_ptr;
  if (values_[i].type_code == kModrtInt) return reinterpret_cast<void*>(values_[i].v_int64);
  MODRT_ARG_MISMATCH(i, "pointer");
}

Object* Args::Obj(int32_t i, int32_t type_index, const char* what) const {
  const ModrtValue& v = values_[i];
  if (v.type_code != kModrtObject || v.v_obj == nullptr ||
      static_cast<Object*>(v.v_obj)->type_index() != type_index) {
    MODRT_ARG_MISMATCH(i, what);
  }
  return static_cast<Object*>(v.v_obj);
}

#undef MODRT_ARG_MISMATCH

void Ret::SetInt(int64_t v) {
  value_->type_code = kModrtInt;
  value_->v_int64 = v;
}
void Ret::SetFloat(double v) {
  value_->type_code = kModrtFloat;
  value_->v_float64 = v;
}
void Ret::SetStr(std::string v) { SetObject(MakeObject<BytesObj>(std::move(v), true)); }
void Ret::SetBytes(std::string v) { SetObject(MakeObject<BytesObj>(std::move(v), false)); }
void Ret::SetPtr(void* v) {
  value_->type_code = kModrtOpaquePtr;
  value_->v_ptr = v;
}
void Ret::SetDevice(DLDevice v) {
  value_->type_code = kModrtDevice;
  value_->v_device = v;
}
void Ret::SetObject(Ref<Object> obj) {
  if (!obj) {
    value_->type_code = kModrtNone;
    return;
  }
  value_->type_code = kModrtObject;
  value_->v_obj = obj.release();
}

OwnedValue::~OwnedValue() {
  if (value_.type_code == kModrtObject && value_.v_obj != nullptr) {
    static_cast<Object*>(value_.v_obj)->DecRef();
  }
}

Ref<Object> OwnedValue::TakeObject() {
  if (value_.type_code != kModrtObject) return nullptr;
  value_.type_code = kModrtNone;
  return Ref<Object>::Adopt(static_cast<Object*>(value_.v_obj));
}

namespace {

struct Registry {
  std::shared_mutex mu;
  std::map<std::string, Ref<FunctionObj>> functions;
};

Registry& GlobalRegistry() {
  // Leaked on purpose: plugins may still call in during process teardown.
  static Registry* registry = std::make_unique<Registry>().release();
  return *registry;
}

}  // namespace

void RegisterGlobal(const std::string& name, PackedBody body, bool allow_override) {
  if (name.empty()) Fail("ValueError", "cannot register a global function with an empty name");
  Registry& r = GlobalRegistry();
  std::unique_lock lock(r.mu);
  auto [it, inserted] = r.functions.try_emplace(name);
  if (!inserted && !allow_override) {
    Fail("KeyError", "global function '", name, "' is already registered");
  }
  it->second = MakeObject<FunctionObj>(std::move(body));
}

void RegisterGlobalObject(const std::string& name, Ref<FunctionObj> func, bool allow_override) {
  Registry& r = GlobalRegistry();
  std::unique_lock lock(r.mu);
  auto [it, inserted] = r.functions.try_emplace(name);
  if (!inserted && !allow_override) {
    Fail("KeyError", "global function '", name, "' is already registered");
  }
  it->second = std::move(func);
}

Ref<FunctionObj> GetGlobal(const std::string& name) {
  Registry& r = GlobalRegistry();
  std::shared_lock lock(r.mu);
  auto it = r.functions.find(name);
  return it == r.functions.end() ? nullptr : it->second;
}

std::vector<std::string> ListGlobals() {
  Registry& r = GlobalRegistry();
  std::shared_lock lock(r.mu);
  std::vector<std::string> names;
  names.reserve(r.functions.size());
  for (const auto& kv : r.functions) names.push_back(kv.first);
  return names;
}

}  // namespace modrt
