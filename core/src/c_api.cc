// The C ABI: thin wrappers that turn C++ errors into return codes.
#include "modrt/abi/c_api.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "internal.h"
#include "modrt/core/backend.h"
#include "modrt/core/device.h"
#include "modrt/core/function.h"
#include "modrt/core/object.h"

using modrt::BytesObj;
using modrt::Fail;
using modrt::FunctionObj;
using modrt::GuardCall;
using modrt::Object;
using modrt::Ref;

namespace {
thread_local std::string last_error;
// The typed code of last_error, when it was set with one (plugin ABI 1.1);
// -1 when set as "Kind: message" (then read from that prefix).
thread_local int32_t last_error_code = -1;

// ModrtSetWaitHooks: set by the frontend when it loads, before its first call.
std::atomic<ModrtWaitEnterFunc> wait_enter{nullptr};
std::atomic<ModrtWaitLeaveFunc> wait_leave{nullptr};
std::atomic<ModrtInterruptCheckFunc> interrupt_check{nullptr};

Object* AsObject(ModrtObjectHandle h) {
  if (h == nullptr) Fail("ValueError", "null object handle");
  return static_cast<Object*>(h);
}

// A DLPack export of `t` (Managed: DLManagedTensor or DLManagedTensorVersioned,
// zeroed but for the tensor, context and deleter) that keeps `t` alive until
// the consumer calls the deleter.
template <typename Managed>
Managed* ExportDLPack(modrt::TensorObj* t) {
  struct Exported {
    Managed managed;
    Ref<modrt::TensorObj> owner;
  };
  auto exported = std::make_unique<Exported>();
  exported->owner = Ref<modrt::TensorObj>(t);
  exported->managed.dl_tensor = *t->dl();
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = [](Managed* self) {
    std::unique_ptr<Exported> done(static_cast<Exported*>(self->manager_ctx));
  };
  return &exported.release()->managed;
}

}  // namespace

namespace modrt {

WaitRegion::WaitRegion() {
  ModrtWaitEnterFunc enter = wait_enter.load(std::memory_order_acquire);
  ModrtWaitLeaveFunc leave = wait_leave.load(std::memory_order_acquire);
  if (enter != nullptr && leave != nullptr) {
    leave_ = leave;
    token_ = enter();
  }
}

WaitRegion::~WaitRegion() {
  if (leave_ != nullptr) leave_(token_);
}

bool InterruptRequested() {
  ModrtInterruptCheckFunc check = interrupt_check.load(std::memory_order_acquire);
  return check != nullptr && check() != 0;
}

double DefaultWaitTimeout() {
  const char* text = std::getenv("MODRT_WAIT_TIMEOUT");
  if (text == nullptr || *text == '\0') return -1.0;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return end != text && seconds >= 0 ? seconds : -1.0;
}

}  // namespace modrt

extern "C" {

void ModrtSetWaitHooks(ModrtWaitEnterFunc enter, ModrtWaitLeaveFunc leave) {
  // Leave first: a region reads leave only when it also found enter.
  wait_leave.store(leave, std::memory_order_release);
  wait_enter.store(enter, std::memory_order_release);
}

void ModrtSetInterruptCheck(ModrtInterruptCheckFunc check) {
  interrupt_check.store(check, std::memory_order_release);
}

int32_t ModrtAbiVersion(void) { return MODRT_ABI_VERSION; }

const char* ModrtGetLastError(void) { return last_error.c_str(); }

void ModrtSetLastError(const char* message) {
  last_error = message ? message : "";
  last_error_code = -1;
}

}  // extern "C"

namespace modrt {

void SetTypedError(int32_t code, const char* message) {
  const char* kind = common::ErrorKindOfCode(code);
  if (kind == nullptr) {  // kModrtErrorOther, or a code from a newer minor
    ModrtSetLastError(message);
    return;
  }
  last_error = StrCat(kind, ": ", message ? message : "");
  last_error_code = code;
}

int32_t LastErrorCode() {
  if (last_error_code >= 0) return last_error_code;
  if (last_error.empty()) return kModrtErrorNone;
  std::string kind, message;
  if (!common::SplitErrorKind(last_error, &kind, &message)) return kModrtErrorRuntime;
  return common::ErrorCodeOfKind(kind);
}

const char* LastErrorMessage() {
  std::string kind, message;
  if (LastErrorCode() == kModrtErrorOther || !common::SplitErrorKind(last_error, &kind, &message)) {
    return last_error.c_str();
  }
  return last_error.c_str() + kind.size() + 2;
}

}  // namespace modrt

extern "C" {

int ModrtObjectRetain(ModrtObjectHandle obj) {
  return GuardCall([&] { AsObject(obj)->IncRef(); });
}

int ModrtObjectRelease(ModrtObjectHandle obj) {
  return GuardCall([&] {
    if (obj != nullptr) static_cast<Object*>(obj)->DecRef();
  });
}

int32_t ModrtObjectTypeIndex(ModrtObjectHandle obj) {
  return obj == nullptr ? -1 : static_cast<Object*>(obj)->type_index();
}

int ModrtBytesCreate(const char* data, size_t size, int is_string, ModrtObjectHandle* out) {
  return GuardCall([&] {
    *out = modrt::MakeObject<BytesObj>(std::string(data, size), is_string != 0).release();
  });
}

int ModrtBytesGet(ModrtObjectHandle obj, const char** data, size_t* size) {
  return GuardCall([&] {
    int32_t t = AsObject(obj)->type_index();
    if (t != kModrtObjBytes && t != kModrtObjString) Fail("TypeError", "not a str or bytes object");
    const std::string& s = static_cast<BytesObj*>(obj)->data();
    *data = s.data();
    *size = s.size();
  });
}

int ModrtFunctionCreate(ModrtSafeCallFunc func, void* resource, ModrtDeleter deleter,
                        ModrtObjectHandle* out) {
  return GuardCall([&] {
    if (func == nullptr) Fail("ValueError", "null function pointer");
    std::shared_ptr<void> owned(resource, [deleter](void* r) {
      if (deleter) deleter(r);
    });
    modrt::RawBody body = [func, owned](const ModrtValue* args, int32_t n, ModrtValue* ret) {
      ret->type_code = kModrtNone;
      if (func(owned.get(), args, n, ret) != 0) modrt::ThrowLastError();
    };
    *out = modrt::MakeObject<FunctionObj>(std::move(body)).release();
  });
}

int ModrtFunctionCall(ModrtObjectHandle func, const ModrtValue* args, int32_t num_args,
                      ModrtValue* ret) {
  return GuardCall([&] {
    ret->type_code = kModrtNone;
    modrt::ObjectAs<FunctionObj>(AsObject(func), kModrtObjFunction, "function")
        ->Call(args, num_args, ret);
  });
}

int ModrtRegisterGlobal(const char* name, ModrtObjectHandle func, int allow_override) {
  return GuardCall([&] {
    auto* f = modrt::ObjectAs<FunctionObj>(AsObject(func), kModrtObjFunction, "function");
    modrt::RegisterGlobalObject(name ? name : "", Ref<FunctionObj>(f), allow_override != 0);
  });
}

int ModrtGetGlobal(const char* name, ModrtObjectHandle* out) {
  return GuardCall([&] { *out = modrt::GetGlobal(name ? name : "").release(); });
}

int ModrtTensorGetDLTensor(ModrtObjectHandle tensor, DLTensor** out) {
  return GuardCall([&] {
    *out = modrt::ObjectAs<modrt::TensorObj>(AsObject(tensor), kModrtObjTensor, "tensor")->dl();
  });
}

int ModrtTensorFromDLPack(DLManagedTensor* managed, int copy, ModrtObjectHandle* out) {
  return GuardCall([&] { *out = modrt::TensorObj::FromDLPack(managed, copy != 0).release(); });
}

int ModrtTensorFromDLPackVersioned(DLManagedTensorVersioned* managed, int copy,
                                   ModrtObjectHandle* out) {
  return GuardCall(
      [&] { *out = modrt::TensorObj::FromDLPackVersioned(managed, copy != 0).release(); });
}

int ModrtTensorToDLPackVersioned(ModrtObjectHandle tensor, uint64_t flags,
                                 DLManagedTensorVersioned** out) {
  return GuardCall([&] {
    auto* t = modrt::ObjectAs<modrt::TensorObj>(AsObject(tensor), kModrtObjTensor, "tensor");
    DLManagedTensorVersioned* managed = ExportDLPack<DLManagedTensorVersioned>(t);
    managed->version.major = DLPACK_MAJOR_VERSION;
    managed->version.minor = DLPACK_MINOR_VERSION;
    managed->flags = flags | (t->read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
    *out = managed;
  });
}

int ModrtTensorToDLPack(ModrtObjectHandle tensor, DLManagedTensor** out) {
  return GuardCall([&] {
    auto* t = modrt::ObjectAs<modrt::TensorObj>(AsObject(tensor), kModrtObjTensor, "tensor");
    *out = ExportDLPack<DLManagedTensor>(t);
  });
}

int ModrtRegisterBackend(const ModrtBackendIdentity* identity) {
  return GuardCall([&] {
    if (identity == nullptr) Fail("ValueError", "null backend identity");
    modrt::RegisterBackend(modrt::BackendInfoFromIdentity(*identity));
  });
}

int ModrtLoadPlugin(const char* path) {
  return GuardCall([&] { modrt::LoadPlugin(path ? path : "", {}); });
}

int ModrtLoadPluginWithOptions(const char* path, const char* const* keys, const char* const* values,
                               size_t count) {
  return GuardCall([&] {
    if (count > 0 && (keys == nullptr || values == nullptr)) {
      Fail("ValueError", "load options: null keys or values for ", count, " options");
    }
    std::map<std::string, std::string> options;
    for (size_t i = 0; i < count; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr) {
        Fail("ValueError", "load option ", i, " has a null key or value");
      }
      options[keys[i]] = values[i];
    }
    modrt::LoadPlugin(path ? path : "", options);
  });
}

}  // extern "C"
