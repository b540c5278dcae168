// A plugin's device API: the C++ class a backend implements (DeviceAPI), its
// adapter to the C table (ModrtDeviceApi and its extension chain), and the
// stream a launch goes to.
#ifndef MODRT_PLUGIN_DEVICE_H_
#define MODRT_PLUGIN_DEVICE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "modrt/plugin/values.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

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
  // Sets `ret` to the attribute's value, or leaves it None when unknown: a
  // backend's own attributes by name (vendor_id, supports_float16, ...), and
  // the well-known ones (ModrtDeviceAttr) under their names unless
  // GetAttribute answers them.
  virtual void GetAttr(int device_id, std::string_view name, Ret* ret) = 0;
  // A well-known attribute (plugin_api.h: ModrtDeviceAttr), in its declared
  // type (a string or an int; the core checks it), or None when unknown. By
  // default GetAttr under the attribute's name.
  virtual void GetAttribute(int device_id, ModrtDeviceAttr attr, Ret* ret) {
    GetAttr(device_id, ModrtDeviceAttrInfoOf(attr)->name, ret);
  }
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
  // default queue (the one Sync drains); a launch finds its queue in its
  // arguments (PackedArgs::NativeStream). Offsets count from the tensor's first byte (data +
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

  // Device layer, later ABI 1.1 additions (plugin_api.h). Each optional.
  // A queue made by another library (CUstream, hipStream_t as an integer),
  // used as StreamCreate's are, never destroyed by modrt.
  virtual bool HasStreamAdopt() const { return false; }
  virtual void* StreamAdopt(int /*device_id*/, uint64_t /*external*/) { Unimplemented(); }
  // What the default queue or a StreamCreate queue is, in words (static
  // text); nullptr: the core describes it.
  virtual const char* QueueDescription(int /*device_id*/, bool /*is_default*/) { return nullptr; }
  // Later ABI 1.1 addition (stream_wait_for): a wait on the caller's thread
  // that the driver bounds by a timeout; true when `stream` completed.
  virtual bool HasTimedStreamWait() const { return false; }
  virtual bool StreamWaitFor(int /*device_id*/, void* /*stream*/, double /*timeout_s*/) {
    Unimplemented();
  }
  // Ends GraphBegin's capture on `stream` into `graph` (GraphEnd's, same
  // launches), updated in place.
  virtual bool HasGraphUpdate() const { return false; }
  virtual void GraphUpdate(int /*device_id*/, void* /*stream*/, void* /*graph*/) {
    Unimplemented();
  }
  // Page-locked host memory the device copies to and from directly;
  // PinnedHostDescription says what it is (static text).
  virtual bool HasPinnedHost() const { return false; }
  virtual void* PinnedHostAlloc(int /*device_id*/, size_t /*nbytes*/) { Unimplemented(); }
  virtual void PinnedHostFree(int /*device_id*/, void* /*ptr*/) { Unimplemented(); }
  virtual const char* PinnedHostDescription() const { return "pinned host memory"; }

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
inline const ModrtDeviceAttributeExtension& AttributeExtension() {
  static const ModrtDeviceAttributeExtension table = {
      {sizeof(ModrtDeviceAttributeExtension), kModrtExtensionDeviceAttributes, nullptr},
      [](void* self, int32_t id, int32_t attr, ModrtValue* ret) {
        return GuardCall([&] {
          Ret r(ret);
          // An attribute of a newer minor than this plugin's headers: unknown.
          if (ModrtDeviceAttrInfoOf(attr) == nullptr) return;
          Api(self)->GetAttribute(id, static_cast<ModrtDeviceAttr>(attr), &r);
        });
      },
  };
  return table;
}
// The well-known attribute called `name`; 0 when none is.
inline int32_t AttrOfName(std::string_view name) {
  for (int32_t attr = MODRT_DEVICE_ATTR_FIRST; attr <= MODRT_DEVICE_ATTR_LAST; ++attr) {
    if (name == ModrtDeviceAttrInfoOf(attr)->name) return attr;
  }
  return 0;
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
      [](void* self, int32_t id, uint64_t external, void** out) {
        return GuardCall([&] { *out = Api(self)->StreamAdopt(id, external); });
      },
      [](void* self, int32_t id, int32_t is_default) -> const char* {
        try {
          return Api(self)->QueueDescription(id, is_default != 0);
        } catch (...) {
          return nullptr;
        }
      },
      [](void* self, int32_t id, void* stream, double timeout_s, int32_t* done) {
        return GuardCall([&] { *done = Api(self)->StreamWaitFor(id, stream, timeout_s) ? 1 : 0; });
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
      [](void* self, int32_t id, void* stream, void* graph) {
        return GuardCall([&] { Api(self)->GraphUpdate(id, stream, graph); });
      },
  };
  return table;
}
inline const ModrtPinnedHostExtension& PinnedHostExtension() {
  static const ModrtPinnedHostExtension table = {
      {sizeof(ModrtPinnedHostExtension), kModrtExtensionPinnedHost, nullptr},
      [](void* self, int32_t id, size_t nbytes, void** out) {
        return GuardCall([&] { *out = Api(self)->PinnedHostAlloc(id, nbytes); });
      },
      [](void* self, int32_t id, void* ptr) {
        return GuardCall([&] { Api(self)->PinnedHostFree(id, ptr); });
      },
      nullptr,
  };
  return table;
}
// The extension chain of a device API: the typed attributes, then the
// tables it says it has, linked, with the optional entries it lacks nulled.
// One chain per registered device API, in static storage (nothing to free,
// nothing unreachable), living for the process like the registration that
// points at it.
inline const ModrtExtension* ExtensionChain(const DeviceAPI& api) {
  struct Chain {
    ModrtDeviceAttributeExtension attributes;
    ModrtRangedCopyExtension ranged;
    ModrtStreamExtension streams;
    ModrtGraphExtension graphs;
    ModrtPinnedHostExtension pinned;
  };
  static std::mutex mu;
  static std::deque<Chain> chains;
  std::lock_guard lock(mu);
  Chain& c = chains.emplace_back(Chain{AttributeExtension(), RangedCopyExtension(),
                                       StreamExtension(), GraphExtension(), PinnedHostExtension()});
  if (!api.HasStreamAdopt()) c.streams.stream_adopt = nullptr;
  if (!api.HasTimedStreamWait()) c.streams.stream_wait_for = nullptr;
  if (!api.HasGraphUpdate()) c.graphs.graph_update = nullptr;
  const ModrtExtension* head = nullptr;
  if (api.HasPinnedHost()) {
    c.pinned.description = api.PinnedHostDescription();
    c.pinned.base.next = head;
    head = &c.pinned.base;
  }
  if (api.HasStreams() && api.HasGraphs()) {
    c.graphs.base.next = head;
    head = &c.graphs.base;
  }
  if (api.HasStreams()) {
    c.streams.base.next = head;
    head = &c.streams.base;
  }
  if (api.HasRangedCopy()) {
    c.ranged.base.next = head;
    head = &c.ranged.base;
  }
  c.attributes.base.next = head;
  return &c.attributes.base;
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
          if (const int32_t attr = AttrOfName(name); attr != 0) {
            Api(self)->GetAttribute(id, static_cast<ModrtDeviceAttr>(attr), &r);
          } else {
            Api(self)->GetAttr(id, name, &r);
          }
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

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_DEVICE_H_
