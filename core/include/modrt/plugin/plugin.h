// The C++ side of a modrt backend plugin: header-only, compiled into each
// plugin DSO, calling the core only through the ModrtCoreApi table it was
// given (plugin_api.h). Nothing here is exported or imported: the namespace
// is hidden, so a plugin built with another compiler or standard library
// (clang + libc++) works with a gcc/libstdc++ core. C++ exceptions stay
// inside the plugin; GuardCall turns them into the C error convention.
//
// A plugin defines its registrations in one function and names it with
// MODRT_DEFINE_PLUGIN(init), which defines the one exported entry point.
#ifndef MODRT_PLUGIN_H_
#define MODRT_PLUGIN_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "modrt/abi/plugin_api.h"
#include "modrt/plugin/common.h"

// The plugin-side namespace is hidden: nothing of it leaves the plugin DSO.
#define MODRT_PLUGIN_HIDDEN __attribute__((visibility("hidden")))

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

namespace internal {
inline const ModrtCoreApi*& CoreSlot() {
  static const ModrtCoreApi* core = nullptr;
  return core;
}
}  // namespace internal

// The core's table, as given to modrt_plugin_init.
inline const ModrtCoreApi& Core() { return *internal::CoreSlot(); }

// An error with a kind that Python maps to an exception class
// ("ValueError", "TypeError", "KeyError", "RuntimeError", ...).
class Error : public std::runtime_error {
 public:
  Error(std::string kind, const std::string& message)
      : std::runtime_error(message), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

using common::StrCat;

template <typename... Parts>
[[noreturn]] void Fail(const char* kind, const Parts&... parts) {
  throw Error(kind, StrCat(parts...));
}

// Rebuilds the Error a core call reported: typed (a core of ABI 1.1), else
// from the ABI 1.0 "Kind: message".
[[noreturn]] inline void ThrowLastError() {
  const ModrtCoreApi& core = Core();
  if (MODRT_CORE_HAS(&core, get_error_message)) {
    if (const char* kind = common::ErrorKindOfCode(core.get_error_code())) {
      throw Error(kind, core.get_error_message());
    }
  }
  std::string message = core.get_last_error();
  std::string kind, text;
  if (common::SplitErrorKind(message, &kind, &text)) throw Error(kind, text);
  throw Error("RuntimeError", message.empty() ? "unknown error" : message);
}

// Throws the core's error when a core call failed.
inline void Check(int status) {
  if (status != 0) ThrowLastError();
}

// Reports an error to the core: by code where the core has typed errors
// (ABI 1.1) and the kind has one, else as "Kind: message".
inline void ReportError(const std::string& kind, const std::string& message) {
  const ModrtCoreApi& core = Core();
  const int32_t code = common::ErrorCodeOfKind(kind);
  if (code != kModrtErrorOther && MODRT_CORE_HAS(&core, set_error)) {
    core.set_error(code, message.c_str());
  } else {
    core.set_last_error((kind + ": " + message).c_str());
  }
}

// Runs `body`, turning any exception into -1 plus the core's last error: the
// one place where the plugin's C++ errors become C ABI return codes.
template <typename Body>
int GuardCall(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const Error& e) {
    ReportError(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    ReportError("MemoryError", "out of host memory");
  } catch (const std::exception& e) {
    ReportError("RuntimeError", e.what());
  } catch (...) {
    ReportError("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

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

// ---------------------------------------------------------------------------
// Backends and devices.

// Declares a backend's identity (plugin_api.h: ModrtBackendIdentity); in-tree
// runtimes get theirs (kBackendIdentity) from backend_identity.h, generated
// from their BUILD file.
inline void RegisterBackend(const ModrtBackendIdentity& identity) {
  Check(Core().register_backend(&identity));
}

// One device family. Implementations live for the whole process. Every
// method but the first two may assume the device exists.
class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  // 0 when the driver or the device is absent; UnavailableReason says why.
  virtual int DeviceCount() = 0;
  virtual std::string UnavailableReason() = 0;
  // Sets `ret` to the attribute's value, or leaves it None when unknown.
  // Common names: name, max_threads_per_block, warp_size,
  // max_shared_memory_per_block, compute_version, multi_processor_count.
  virtual void GetAttr(int device_id, std::string_view name, Ret* ret) = 0;
  virtual void* Alloc(int device_id, size_t nbytes) = 0;
  virtual void Free(int device_id, void* ptr) = 0;
  // Whole-tensor copies; `tensor` lives on this API's device.
  virtual void CopyFromHost(const void* src, DLTensor* tensor, size_t nbytes) = 0;
  virtual void CopyToHost(const DLTensor* tensor, void* dst, size_t nbytes) = 0;
  virtual void Sync(int device_id) = 0;
  // ABI 1.1, optional: copies of `nbytes` at byte `offset` of a tensor's
  // memory. A device API that has them says so with HasRangedCopy.
  virtual bool HasRangedCopy() const { return false; }
  virtual void CopyRangeFromHost(const void*, DLTensor*, size_t, size_t) {
    Fail("NotImplementedError", "this device API has no ranged copies");
  }
  virtual void CopyRangeToHost(const DLTensor*, size_t, void*, size_t) {
    Fail("NotImplementedError", "this device API has no ranged copies");
  }

  // ABI 1.1, optional: native queues and events (plugin_api.h,
  // ModrtStreamExtension). A device API that has them says so with
  // HasStreams and implements every virtual below. `stream` NULL is the
  // default queue (the one Sync drains); a launch finds its queue with
  // CurrentStream(). Offsets count from the tensor's first byte (data +
  // byte_offset).
  virtual bool HasStreams() const { return false; }
  virtual void* StreamCreate(int /*device_id*/) { Unimplemented(); }
  virtual void StreamDestroy(int /*device_id*/, void* /*stream*/) { Unimplemented(); }
  virtual void StreamSynchronize(int /*device_id*/, void* /*stream*/) { Unimplemented(); }
  // With `timing`, the event carries a device timestamp for EventElapsedMs.
  virtual void* EventRecord(int /*device_id*/, void* /*stream*/, bool /*timing*/) {
    Unimplemented();
  }
  virtual bool EventQuery(int /*device_id*/, void* /*event*/) { Unimplemented(); }
  virtual void EventSynchronize(int /*device_id*/, void* /*event*/) { Unimplemented(); }
  // Device milliseconds from `start` to `end`; NotImplementedError when the
  // device has no timestamps (never host time).
  virtual double EventElapsedMs(int /*device_id*/, void* /*start*/, void* /*end*/) {
    Unimplemented();
  }
  virtual void EventDestroy(int /*device_id*/, void* /*event*/) { Unimplemented(); }
  virtual void StreamWaitEvent(int /*device_id*/, void* /*stream*/, void* /*event*/) {
    Unimplemented();
  }
  // May return before the copy is done: the core keeps `host` alive and
  // unchanged until an event recorded after it completed.
  virtual void CopyFromHostAsync(const void* /*host*/, DLTensor* /*dst*/, size_t /*offset*/,
                                 size_t /*nbytes*/, void* /*stream*/) {
    Unimplemented();
  }
  virtual void CopyToHostAsync(const DLTensor* /*src*/, size_t /*offset*/, void* /*host*/,
                               size_t /*nbytes*/, void* /*stream*/) {
    Unimplemented();
  }
  virtual void CopyDeviceToDevice(const DLTensor* /*src*/, size_t /*src_offset*/, DLTensor* /*dst*/,
                                  size_t /*dst_offset*/, size_t /*nbytes*/, void* /*stream*/) {
    Unimplemented();
  }

  // ABI 1.1, optional (needs HasStreams): recorded launches (plugin_api.h,
  // ModrtGraphExtension). Between GraphBegin and GraphEnd, the launches this
  // plugin receives for `stream` are recorded, not run.
  virtual bool HasGraphs() const { return false; }
  virtual void GraphBegin(int /*device_id*/, void* /*stream*/) { Unimplemented(); }
  virtual void* GraphEnd(int /*device_id*/, void* /*stream*/) { Unimplemented(); }
  virtual void GraphLaunch(int /*device_id*/, void* /*graph*/, void* /*stream*/) {
    Unimplemented();
  }
  virtual void GraphDestroy(int /*device_id*/, void* /*graph*/) { Unimplemented(); }

 private:
  [[noreturn]] static void Unimplemented() {
    Fail("NotImplementedError", "this device API does not implement this part of the device layer");
  }
};

// The native queue (DeviceAPI::StreamCreate's, or NULL for the default
// queue) that a launch on device (`type`, `device_id`) goes to now. NULL with
// a core of ABI 1.0, which has no streams of its own.
inline void* CurrentStream(DLDeviceType type, int device_id) {
  const ModrtCoreApi& core = Core();
  if (!MODRT_CORE_HAS(&core, current_stream)) return nullptr;
  void* stream = nullptr;
  Check(core.current_stream(type, device_id, &stream));
  return stream;
}

namespace internal {
inline DeviceAPI* Api(void* self) { return static_cast<DeviceAPI*>(self); }
inline const ModrtRangedCopyExtension& RangedCopyExtension() {
  static const ModrtRangedCopyExtension table = {
      {sizeof(ModrtRangedCopyExtension), kModrtExtensionRangedCopy, nullptr},
      [](void* self, const void* src, DLTensor* dst, size_t offset, size_t nbytes) {
        return GuardCall([&] { Api(self)->CopyRangeFromHost(src, dst, offset, nbytes); });
      },
      [](void* self, const DLTensor* src, size_t offset, void* dst, size_t nbytes) {
        return GuardCall([&] { Api(self)->CopyRangeToHost(src, offset, dst, nbytes); });
      },
  };
  return table;
}
inline const ModrtStreamExtension& StreamExtension() {
  static const ModrtStreamExtension table = {
      {sizeof(ModrtStreamExtension), kModrtExtensionStreams, nullptr},
      [](void* self, int32_t id, void** out) {
        return GuardCall([&] { *out = Api(self)->StreamCreate(id); });
      },
      [](void* self, int32_t id, void* stream) {
        return GuardCall([&] { Api(self)->StreamDestroy(id, stream); });
      },
      [](void* self, int32_t id, void* stream) {
        return GuardCall([&] { Api(self)->StreamSynchronize(id, stream); });
      },
      [](void* self, int32_t id, void* stream, int32_t timing, void** out) {
        return GuardCall([&] { *out = Api(self)->EventRecord(id, stream, timing != 0); });
      },
      [](void* self, int32_t id, void* event, int32_t* done) {
        return GuardCall([&] { *done = Api(self)->EventQuery(id, event) ? 1 : 0; });
      },
      [](void* self, int32_t id, void* event) {
        return GuardCall([&] { Api(self)->EventSynchronize(id, event); });
      },
      [](void* self, int32_t id, void* start, void* end, double* ms) {
        return GuardCall([&] { *ms = Api(self)->EventElapsedMs(id, start, end); });
      },
      [](void* self, int32_t id, void* event) {
        return GuardCall([&] { Api(self)->EventDestroy(id, event); });
      },
      [](void* self, int32_t id, void* stream, void* event) {
        return GuardCall([&] { Api(self)->StreamWaitEvent(id, stream, event); });
      },
      [](void* self, const void* host, DLTensor* dst, size_t offset, size_t nbytes, void* stream) {
        return GuardCall([&] { Api(self)->CopyFromHostAsync(host, dst, offset, nbytes, stream); });
      },
      [](void* self, const DLTensor* src, size_t offset, void* host, size_t nbytes, void* stream) {
        return GuardCall([&] { Api(self)->CopyToHostAsync(src, offset, host, nbytes, stream); });
      },
      [](void* self, const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
         size_t nbytes, void* stream) {
        return GuardCall([&] {
          Api(self)->CopyDeviceToDevice(src, src_offset, dst, dst_offset, nbytes, stream);
        });
      },
  };
  return table;
}
inline const ModrtGraphExtension& GraphExtension() {
  static const ModrtGraphExtension table = {
      {sizeof(ModrtGraphExtension), kModrtExtensionGraphs, nullptr},
      [](void* self, int32_t id, void* stream) {
        return GuardCall([&] { Api(self)->GraphBegin(id, stream); });
      },
      [](void* self, int32_t id, void* stream, void** out) {
        return GuardCall([&] { *out = Api(self)->GraphEnd(id, stream); });
      },
      [](void* self, int32_t id, void* graph, void* stream) {
        return GuardCall([&] { Api(self)->GraphLaunch(id, graph, stream); });
      },
      [](void* self, int32_t id, void* graph) {
        return GuardCall([&] { Api(self)->GraphDestroy(id, graph); });
      },
  };
  return table;
}
// The extension chain of a device API: the tables it says it has, linked.
// Lives for the process, like the registration that points at it.
inline const ModrtExtension* ExtensionChain(const DeviceAPI& api) {
  struct Chain {
    ModrtRangedCopyExtension ranged;
    ModrtStreamExtension streams;
    ModrtGraphExtension graphs;
  };
  // A device API with no extension has no chain (nothing to keep alive:
  // LeakSanitizer would report an unreachable one).
  if (!api.HasStreams() && !api.HasRangedCopy()) return nullptr;
  auto* chain =
      std::make_unique<Chain>(Chain{RangedCopyExtension(), StreamExtension(), GraphExtension()})
          .release();
  const ModrtExtension* head = nullptr;
  if (api.HasStreams() && api.HasGraphs()) {
    chain->graphs.base.next = head;
    head = &chain->graphs.base;
  }
  if (api.HasStreams()) {
    chain->streams.base.next = head;
    head = &chain->streams.base;
  }
  if (api.HasRangedCopy()) {
    chain->ranged.base.next = head;
    head = &chain->ranged.base;
  }
  return head;
}
inline const ModrtDeviceApi& DeviceApiTable() {
  static const ModrtDeviceApi table = {
      sizeof(ModrtDeviceApi),
      nullptr,
      [](void* self, int32_t* out) { return GuardCall([&] { *out = Api(self)->DeviceCount(); }); },
      [](void* self, ModrtObjectHandle* out) {
        return GuardCall([&] { *out = MakeString(Api(self)->UnavailableReason()).release(); });
      },
      [](void* self, int32_t id, const char* name, ModrtValue* ret) {
        return GuardCall([&] {
          Ret r(ret);
          Api(self)->GetAttr(id, name, &r);
        });
      },
      [](void* self, int32_t id, size_t nbytes, void** out) {
        return GuardCall([&] { *out = Api(self)->Alloc(id, nbytes); });
      },
      [](void* self, int32_t id, void* ptr) {
        return GuardCall([&] { Api(self)->Free(id, ptr); });
      },
      [](void* self, const void* src, DLTensor* dst, size_t nbytes) {
        return GuardCall([&] { Api(self)->CopyFromHost(src, dst, nbytes); });
      },
      [](void* self, const DLTensor* src, void* dst, size_t nbytes) {
        return GuardCall([&] { Api(self)->CopyToHost(src, dst, nbytes); });
      },
      [](void* self, int32_t id) { return GuardCall([&] { Api(self)->Sync(id); }); },
      nullptr,
  };
  return table;
}
}  // namespace internal

// Registers `device_api.<kind>`; `api` must outlive the process.
inline void RegisterDeviceAPI(const std::string& kind, DeviceAPI* api) {
  ModrtDeviceApi table = internal::DeviceApiTable();
  table.self = api;
  table.extensions = internal::ExtensionChain(*api);
  Check(Core().register_device_api(kind.c_str(), &table));
}

// ---------------------------------------------------------------------------
// Payloads and modules.

struct ArgInfo {
  DLDataType dtype;
  bool is_buffer;  // a tensor of `dtype`, passed as its device pointer
};

// A function's signature, as the payload declares it.
struct FunctionInfo {
  std::string name;
  std::vector<ArgInfo> args;
  std::vector<std::string> launch_tags;
  const void* core_info = nullptr;  // the core's description, for KernelArgs::Pack

  // "vadd(float32*, float32*, int32; blockIdx.x, threadIdx.x)"
  std::string ToString() const {
    std::string s = name + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      s += (i ? ", " : "") + DTypeToString(args[i].dtype) + (args[i].is_buffer ? "*" : "");
    }
    for (size_t i = 0; i < launch_tags.size(); ++i) s += (i ? ", " : "; ") + launch_tags[i];
    return s + ")";
  }
};

using FunctionMap = std::map<std::string, FunctionInfo>;

// What a module is made from: the payload the core holds, read once.
class Payload {
 public:
  static Payload FromHandle(ModrtObjectHandle handle) {
    const ModrtCoreApi& core = Core();
    Payload p;
    p.handle_ = ObjectRef::Borrow(handle);
    ModrtPayloadView view{};
    view.struct_size = sizeof(view);
    Check(core.payload_view(handle, &view));
    p.shape = static_cast<ModrtPayloadShape>(view.shape);
    p.fmt.assign(view.fmt, view.fmt_size);
    p.code.assign(view.code, view.code_size);
    for (int64_t i = 0; i < view.num_functions; ++i) {
      ModrtFunctionView f{};
      f.struct_size = sizeof(f);
      Check(core.payload_function(handle, i, &f));
      FunctionInfo info;
      info.name.assign(f.name, f.name_size);
      info.core_info = f.info;
      for (int64_t a = 0; a < f.num_args; ++a) {
        ModrtArgInfo arg{};
        Check(core.function_arg(f.info, a, &arg));
        info.args.push_back(ArgInfo{arg.dtype, arg.is_buffer != 0});
      }
      for (int64_t t = 0; t < f.num_launch_tags; ++t) {
        const char* tag = nullptr;
        Check(core.function_launch_tag(f.info, t, &tag));
        info.launch_tags.emplace_back(tag);
      }
      std::string name = info.name;
      p.fmap.emplace(std::move(name), std::move(info));
    }
    for (int64_t i = 0; i < view.num_shaders; ++i) {
      const char *name = nullptr, *data = nullptr;
      size_t name_size = 0, size = 0;
      Check(core.payload_shader(handle, i, &name, &name_size, &data, &size));
      p.smap.emplace(std::string(name, name_size), std::string(data, size));
    }
    return p;
  }

  ModrtPayloadShape shape = kModrtSingleBinary;
  std::string fmt;
  FunctionMap fmap;
  std::string code;                         // single-binary
  std::map<std::string, std::string> smap;  // multi-shader: function -> bytes

  const FunctionInfo& Function(const std::string& name) const {
    auto it = fmap.find(name);
    if (it == fmap.end()) Fail("KeyError", "no function '", name, "' in this module");
    return it->second;
  }
  ModrtObjectHandle handle() const { return handle_.get(); }

 private:
  ObjectRef handle_;
};

using common::LaunchConfig;

// `size` elements of T at `data`: the part of C++20's std::span a launch uses.
template <typename T>
class Span {
 public:
  Span(T* data, size_t size) : data_(data), size_(size) {}
  size_t size() const { return size_; }
  T* data() const { return data_; }
  T& operator[](size_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }

 private:
  T* data_;
  size_t size_;
};

// Kernel arguments as the core packed them (ModrtKernelArgs), borrowed for
// one launch: a slot per argument with its value in its declared C type
// (buffers: the device pointer), ptrs[i] = &slots[i], sizes[i], buffers[i]
// (the tensor; null for scalars), and the launch configuration.
struct PackedArgs {
  Span<const uint64_t> slots;
  Span<void* const> ptrs;
  Span<const size_t> sizes;
  Span<const DLTensor* const> buffers;
  LaunchConfig launch;
  int device_id = 0;  // of every buffer argument (0 when there are none)

  static PackedArgs Of(const ModrtKernelArgs& c) {
    const auto n = static_cast<size_t>(c.num_args);
    PackedArgs p{{c.slots, n}, {c.ptrs, n}, {c.sizes, n}, {c.buffers, n}, {}, c.device_id};
    for (int d = 0; d < 3; ++d) {
      p.launch.grid[d] = c.grid[d];
      p.launch.block[d] = c.block[d];
    }
    p.launch.dyn_shared_bytes = c.dyn_shared_bytes;
    return p;
  }
};

// Kernel arguments marshalled by the core, the same way for every backend
// (common::KernelArgsBase).
struct KernelArgs : common::KernelArgsBase {
  // Checks count, kinds, dtypes, device type and that all buffers share one
  // device (TypeError / ValueError naming the function and the argument),
  // then fills the slots.
  static KernelArgs Pack(const FunctionInfo& info, const Args& args, DLDeviceType device_type) {
    KernelArgs k;
    k.Fill(info.args.size(), [&](ModrtKernelArgs* c) {
      Check(Core().kernel_args_pack(info.core_info, args.values(), args.size(), device_type, c));
    });
    return k;
  }
  PackedArgs View() const {
    const size_t n = slots.size();
    return PackedArgs{{slots.data(), n},   {ptrs.data(), n}, {sizes.data(), n},
                      {buffers.data(), n}, launch,           device_id};
  }
};

namespace internal {
struct ModuleAccess;
}  // namespace internal

// A plugin module: the core's module object owns it and asks it for
// functions. Modules made without a payload also answer SaveToBytes() and
// FunctionNames().
class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;
  // Null when this module has no such function.
  virtual ObjectRef GetFunction(const std::string& name) = 0;
  virtual std::string SaveToBytes() const { Fail("RuntimeError", "this module cannot be saved"); }
  virtual std::vector<std::string> FunctionNames() const { return {}; }
  // ABI 1.1, modules made with a payload: true when the core may launch
  // function `index` (payload order) with the arguments it packed, through
  // LaunchPackedAt: one call down per launch (PayloadModule::LaunchPacked).
  virtual bool LaunchesPacked() const { return false; }
  virtual void LaunchPackedAt(int64_t index, const ModrtKernelArgs& args) {
    Fail("RuntimeError", "this module does not launch packed arguments");
  }

  // The core's module object (borrowed: it owns this).
  ModrtObjectHandle handle() const { return handle_; }

 private:
  friend struct internal::ModuleAccess;
  ModrtObjectHandle handle_ = nullptr;
};

namespace internal {
struct ModuleAccess {
  static void Bind(Module* module, ModrtObjectHandle handle) { module->handle_ = handle; }
};
inline Module* Self(void* self) { return static_cast<Module*>(self); }
// Two tables: with the launch entry for modules that launch packed
// arguments, without it for the others (the core then calls their functions).
inline ModrtModuleVTable BaseModuleVTable() {
  return {
      sizeof(ModrtModuleVTable),
      [](void* self) { delete Self(self); },
      [](void* self, const char* name, ModrtObjectHandle* out) {
        return GuardCall([&] { *out = Self(self)->GetFunction(name).release(); });
      },
      [](void* self, ModrtObjectHandle* out) {
        return GuardCall([&] { *out = MakeBytes(Self(self)->SaveToBytes()).release(); });
      },
      [](void* self, ModrtObjectHandle* out) {
        return GuardCall([&] {
          std::string joined;
          for (const std::string& n : Self(self)->FunctionNames()) joined += n + "\n";
          *out = MakeString(joined).release();
        });
      },
      nullptr,
  };
}
inline const ModrtModuleVTable& ModuleVTable() {
  static const ModrtModuleVTable table = BaseModuleVTable();
  return table;
}
inline const ModrtModuleVTable& PackedModuleVTable() {
  static const ModrtModuleVTable table = [] {
    ModrtModuleVTable t = BaseModuleVTable();
    t.launch = [](void* self, int64_t index, const ModrtKernelArgs* args) {
      return GuardCall([&] { Self(self)->LaunchPackedAt(index, *args); });
    };
    return t;
  }();
  return table;
}
}  // namespace internal

// The core's module object for `module`: of backend `kind` made from
// `payload`, or (payload null) a module that saves and names itself.
inline ObjectRef MakeModule(std::unique_ptr<Module> module, const std::string& kind,
                            ModrtObjectHandle payload = nullptr) {
  Module* self = module.release();  // the core owns it from here, also on error
  const ModrtModuleVTable* vtable = self->LaunchesPacked() && payload != nullptr
                                        ? &internal::PackedModuleVTable()
                                        : &internal::ModuleVTable();
  ModrtObjectHandle out = nullptr;
  Check(Core().module_create(vtable, self, kind.c_str(), payload, &out));
  internal::ModuleAccess::Bind(self, out);
  return ObjectRef::Adopt(out);
}

// The plugin module of type T behind a module object; null when the object is
// not one of this plugin's modules or not a T.
template <typename T>
T* ModuleAs(ModrtObjectHandle module) {
  void* self = nullptr;
  Check(Core().module_get_self(module, &internal::ModuleVTable(), &self));
  if (self == nullptr)
    Check(Core().module_get_self(module, &internal::PackedModuleVTable(), &self));
  return self == nullptr ? nullptr : dynamic_cast<T*>(internal::Self(self));
}

// A device module defined by its payload: the core saves and inspects it
// (one serializer, so the real module and the fallback save the same bytes).
class PayloadModule : public Module {
 public:
  explicit PayloadModule(Payload payload) : payload_(std::move(payload)) {
    for (const auto& entry : payload_.fmap) by_index_.push_back(&entry.second);
  }
  const Payload& payload() const { return payload_; }

  // A module that launches with the arguments the core packed overrides
  // LaunchesPacked (true) and LaunchPacked, and returns
  // PackedLaunchingFunction(name, device_type) from GetFunction (what a
  // core of plugin ABI 1.0 calls: it packs, then calls LaunchPacked).
  virtual void LaunchPacked(const FunctionInfo& info, size_t index, const PackedArgs& args) {
    Fail("RuntimeError", "this module does not launch packed arguments");
  }
  void LaunchPackedAt(int64_t index, const ModrtKernelArgs& args) final {
    if (index < 0 || static_cast<size_t>(index) >= by_index_.size()) {
      Fail("IndexError", "function index ", index, " out of range");
    }
    LaunchPacked(*by_index_[index], static_cast<size_t>(index), PackedArgs::Of(args));
  }

 protected:
  // What runtime modules return from GetFunction: a function that calls
  // `launch(info, index in fmap, args)` and keeps this module alive; null when
  // the payload has no function `name`.
  using Launcher = std::function<void(const FunctionInfo& info, size_t index, const Args& args)>;
  ObjectRef LaunchingFunction(const std::string& name, Launcher launch) {
    auto it = payload_.fmap.find(name);
    if (it == payload_.fmap.end()) return nullptr;
    struct Launching {
      ObjectRef keep_alive;  // the module object, which owns `info`
      Launcher launch;
      const FunctionInfo* info;
      size_t index;
    };
    auto state = std::make_unique<Launching>(
        Launching{ObjectRef::Borrow(handle()), std::move(launch), &it->second,
                  static_cast<size_t>(std::distance(payload_.fmap.begin(), it))});
    ModrtObjectHandle out = nullptr;
    Check(Core().function_create(
        [](void* resource, const ModrtValue* args, int32_t num_args, ModrtValue*) {
          return GuardCall([&] {
            const auto* s = static_cast<const Launching*>(resource);
            s->launch(*s->info, s->index, Args(args, num_args));
          });
        },
        state.get(), [](void* resource) { delete static_cast<Launching*>(resource); }, &out));
    state.release();  // the function object owns it now
    return ObjectRef::Adopt(out);
  }
  ObjectRef PackedLaunchingFunction(const std::string& name, DLDeviceType device_type) {
    return LaunchingFunction(
        name, [this, device_type](const FunctionInfo& info, size_t index, const Args& args) {
          LaunchPacked(info, index, KernelArgs::Pack(info, args, device_type).View());
        });
  }

 private:
  Payload payload_;
  std::vector<const FunctionInfo*> by_index_;  // fmap's functions in order
};

// Registers `module.create.<name>` and `module.load_from_bytes.<name>` for
// backend `identity` (registering the identity too): the core checks each
// payload against the identity, then `factory` makes the module.
using ModuleFactory = std::unique_ptr<PayloadModule> (*)(Payload payload);
inline void RegisterRuntimeModule(const ModrtBackendIdentity& identity, ModuleFactory factory) {
  RegisterBackend(identity);
  struct Context {
    std::string kind;
    ModuleFactory factory;
  };
  // Lives for the process, like the registration that points at it.
  Context* ctx = std::make_unique<Context>(Context{identity.name, factory}).release();
  Check(Core().register_module_factory(
      identity.name,
      [](void* c, ModrtObjectHandle payload, ModrtObjectHandle* out) {
        return GuardCall([&] {
          const auto* context = static_cast<const Context*>(c);
          *out = MakeModule(context->factory(Payload::FromHandle(payload)), context->kind, payload)
                     .release();
        });
      },
      ctx));
}

// ---------------------------------------------------------------------------
// The entry point.

namespace internal {
inline void (*&InitSlot())() {
  static void (*init)() = nullptr;
  return init;
}
inline int RegisterPlugin() {
  return GuardCall([] { InitSlot()(); });
}
}  // namespace internal

}  // namespace plugin
}  // namespace modrt

// The ABI version a plugin states; overridable only to test the refusal.
#ifndef MODRT_PLUGIN_CLAIMED_ABI_MAJOR
#define MODRT_PLUGIN_CLAIMED_ABI_MAJOR MODRT_PLUGIN_ABI_MAJOR
#endif
#ifndef MODRT_PLUGIN_CLAIMED_ABI_MINOR
#define MODRT_PLUGIN_CLAIMED_ABI_MINOR MODRT_PLUGIN_ABI_MINOR
#endif

// Defines modrt_plugin_init, the one symbol a plugin exports. `init`
// (void()) registers the plugin's backend and functions; it runs once, after
// the core accepted the plugin's table.
#define MODRT_DEFINE_PLUGIN(init)                                                              \
  extern "C" __attribute__((visibility("default"))) const ModrtPluginApi* modrt_plugin_init(   \
      const ModrtCoreApi* core) {                                                              \
    static const ModrtPluginApi api = {sizeof(ModrtPluginApi), MODRT_PLUGIN_CLAIMED_ABI_MAJOR, \
                                       MODRT_PLUGIN_CLAIMED_ABI_MINOR, #init,                  \
                                       &::modrt::plugin::internal::RegisterPlugin};            \
    if (core != nullptr && core->abi_major == MODRT_PLUGIN_ABI_MAJOR) {                        \
      ::modrt::plugin::internal::CoreSlot() = core;                                            \
      ::modrt::plugin::internal::InitSlot() = [] { init(); };                                  \
    }                                                                                          \
    return &api;                                                                               \
  }

#endif  // MODRT_PLUGIN_H_
