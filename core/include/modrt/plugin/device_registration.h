// How a plugin's device layer (device.h) reaches the core: the C table of its
// device (ModrtDeviceApi) and, linked on its extension chain, the table of
// each optional part it has; a part it lacks is a table left off the chain or
// an entry left null (device_extensions.h).
#ifndef MODRT_PLUGIN_DEVICE_REGISTRATION_H_
#define MODRT_PLUGIN_DEVICE_REGISTRATION_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "modrt/plugin/device.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {
namespace internal {

// Every table's `self` is the registered DeviceLayer.
inline const DeviceLayer& Layer(void* self) { return *static_cast<const DeviceLayer*>(self); }
inline DeviceAPI* DeviceOf(void* self) { return Layer(self).device; }
inline Queues* QueuesOf(void* self) { return Layer(self).queues; }
inline Graphs* GraphsOf(void* self) { return Layer(self).graphs; }

// The well-known attribute called `name`; 0 when none is.
inline int32_t AttrOfName(std::string_view name) {
  for (int32_t attr = MODRT_DEVICE_ATTR_FIRST; attr <= MODRT_DEVICE_ATTR_LAST; ++attr) {
    if (name == ModrtDeviceAttrInfoOf(attr)->name) return attr;
  }
  return 0;
}

inline ModrtDeviceApi DeviceTable() {
  return {
      sizeof(ModrtDeviceApi),
      nullptr,
      [](void* self, int32_t* out) {
        return GuardCall([&] { *out = DeviceOf(self)->DeviceCount(); });
      },
      [](void* self, ModrtObjectHandle* out) {
        return GuardCall([&] { *out = MakeString(DeviceOf(self)->UnavailableReason()).release(); });
      },
      [](void* self, int32_t id, const char* name, ModrtValue* ret) {
        return GuardCall([&] {
          Ret r(ret);
          if (const int32_t attr = AttrOfName(name); attr != 0) {
            DeviceOf(self)->GetAttribute(id, static_cast<ModrtDeviceAttr>(attr), &r);
          } else {
            DeviceOf(self)->GetAttr(id, name, &r);
          }
        });
      },
      [](void* self, int32_t id, size_t nbytes, void** out) {
        return GuardCall([&] { *out = DeviceOf(self)->Alloc(id, nbytes); });
      },
      [](void* self, int32_t id, void* ptr) {
        return GuardCall([&] { DeviceOf(self)->Free(id, ptr); });
      },
      [](void* self, const void* src, DLTensor* dst, size_t nbytes) {
        return GuardCall([&] { DeviceOf(self)->CopyFromHost(src, dst, nbytes); });
      },
      [](void* self, const DLTensor* src, void* dst, size_t nbytes) {
        return GuardCall([&] { DeviceOf(self)->CopyToHost(src, dst, nbytes); });
      },
      [](void* self, int32_t id) { return GuardCall([&] { DeviceOf(self)->Sync(id); }); },
      nullptr,
  };
}

inline ModrtDeviceAttributeExtension AttributeTable() {
  return {
      {sizeof(ModrtDeviceAttributeExtension), kModrtExtensionDeviceAttributes, nullptr},
      [](void* self, int32_t id, int32_t attr, ModrtValue* ret) {
        return GuardCall([&] {
          Ret r(ret);
          // An attribute of a newer minor than this plugin's headers: unknown.
          if (ModrtDeviceAttrInfoOf(attr) == nullptr) return;
          DeviceOf(self)->GetAttribute(id, static_cast<ModrtDeviceAttr>(attr), &r);
        });
      },
  };
}

inline ModrtRangedCopyExtension RangedCopyTable() {
  return {
      {sizeof(ModrtRangedCopyExtension), kModrtExtensionRangedCopy, nullptr},
      [](void* self, const void* src, DLTensor* dst, size_t offset, size_t nbytes) {
        return GuardCall(
            [&] { Layer(self).ranged_copies->CopyRangeFromHost(src, dst, offset, nbytes); });
      },
      [](void* self, const DLTensor* src, size_t offset, void* dst, size_t nbytes) {
        return GuardCall(
            [&] { Layer(self).ranged_copies->CopyRangeToHost(src, offset, dst, nbytes); });
      },
  };
}

// With the optional entries of the parts `layer` has.
inline ModrtStreamExtension StreamTable(const DeviceLayer& layer) {
  ModrtStreamExtension table = {
      {sizeof(ModrtStreamExtension), kModrtExtensionStreams, nullptr},
      [](void* self, int32_t id, void** out) {
        return GuardCall([&] { *out = QueuesOf(self)->StreamCreate(id); });
      },
      [](void* self, int32_t id, void* stream) {
        return GuardCall([&] { QueuesOf(self)->StreamDestroy(id, stream); });
      },
      [](void* self, int32_t id, void* stream) {
        return GuardCall([&] { QueuesOf(self)->StreamSynchronize(id, stream); });
      },
      [](void* self, int32_t id, void* stream, int32_t timing, void** out) {
        return GuardCall([&] { *out = QueuesOf(self)->EventRecord(id, stream, timing != 0); });
      },
      [](void* self, int32_t id, void* event, int32_t* done) {
        return GuardCall([&] { *done = QueuesOf(self)->EventQuery(id, event) ? 1 : 0; });
      },
      [](void* self, int32_t id, void* event) {
        return GuardCall([&] { QueuesOf(self)->EventSynchronize(id, event); });
      },
      [](void* self, int32_t id, void* start, void* end, double* ms) {
        return GuardCall([&] { *ms = QueuesOf(self)->EventElapsedMs(id, start, end); });
      },
      [](void* self, int32_t id, void* event) {
        return GuardCall([&] { QueuesOf(self)->EventDestroy(id, event); });
      },
      [](void* self, int32_t id, void* stream, void* event) {
        return GuardCall([&] { QueuesOf(self)->StreamWaitEvent(id, stream, event); });
      },
      [](void* self, const void* host, DLTensor* dst, size_t offset, size_t nbytes, void* stream) {
        return GuardCall(
            [&] { QueuesOf(self)->CopyFromHostAsync(host, dst, offset, nbytes, stream); });
      },
      [](void* self, const DLTensor* src, size_t offset, void* host, size_t nbytes, void* stream) {
        return GuardCall(
            [&] { QueuesOf(self)->CopyToHostAsync(src, offset, host, nbytes, stream); });
      },
      [](void* self, const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
         size_t nbytes, void* stream) {
        return GuardCall([&] {
          QueuesOf(self)->CopyDeviceToDevice(src, src_offset, dst, dst_offset, nbytes, stream);
        });
      },
      nullptr,
      [](void* self, int32_t id, int32_t is_default) -> const char* {
        try {
          return QueuesOf(self)->QueueDescription(id, is_default != 0);
        } catch (...) {
          return nullptr;
        }
      },
      nullptr,
  };
  if (layer.foreign_streams != nullptr) {
    table.stream_adopt = [](void* self, int32_t id, uint64_t external, void** out) {
      return GuardCall([&] { *out = Layer(self).foreign_streams->StreamAdopt(id, external); });
    };
  }
  if (layer.timed_waits != nullptr) {
    table.stream_wait_for = [](void* self, int32_t id, void* stream, double timeout_s,
                               int32_t* done) {
      return GuardCall(
          [&] { *done = Layer(self).timed_waits->StreamWaitFor(id, stream, timeout_s) ? 1 : 0; });
    };
  }
  return table;
}

inline ModrtGraphExtension GraphTable(const DeviceLayer& layer) {
  ModrtGraphExtension table = {
      {sizeof(ModrtGraphExtension), kModrtExtensionGraphs, nullptr},
      [](void* self, int32_t id, void* stream) {
        return GuardCall([&] { GraphsOf(self)->GraphBegin(id, stream); });
      },
      [](void* self, int32_t id, void* stream, void** out) {
        return GuardCall([&] { *out = GraphsOf(self)->GraphEnd(id, stream); });
      },
      [](void* self, int32_t id, void* graph, void* stream) {
        return GuardCall([&] { GraphsOf(self)->GraphLaunch(id, graph, stream); });
      },
      [](void* self, int32_t id, void* graph) {
        return GuardCall([&] { GraphsOf(self)->GraphDestroy(id, graph); });
      },
      nullptr,
  };
  if (layer.graph_updates != nullptr) {
    table.graph_update = [](void* self, int32_t id, void* stream, void* graph) {
      return GuardCall([&] { Layer(self).graph_updates->GraphUpdate(id, stream, graph); });
    };
  }
  return table;
}

inline ModrtPinnedHostExtension PinnedHostTable(const DeviceLayer& layer) {
  return {
      {sizeof(ModrtPinnedHostExtension), kModrtExtensionPinnedHost, nullptr},
      [](void* self, int32_t id, size_t nbytes, void** out) {
        return GuardCall([&] { *out = Layer(self).pinned_host->PinnedHostAlloc(id, nbytes); });
      },
      [](void* self, int32_t id, void* ptr) {
        return GuardCall([&] { Layer(self).pinned_host->PinnedHostFree(id, ptr); });
      },
      layer.pinned_host->PinnedHostDescription(),
  };
}

// The C table of `layer`, its `self` a copy of the layer and its extension
// chain the typed attributes, then a table per part present. One per
// registration, in static storage (nothing to free, nothing unreachable),
// living for the process like the registration that points at it.
inline ModrtDeviceApi DeviceApiTableOf(const DeviceLayer& registered) {
  struct Registration {
    DeviceLayer layer;
    ModrtDeviceAttributeExtension attributes;
    ModrtRangedCopyExtension ranged;
    ModrtStreamExtension streams;
    ModrtGraphExtension graphs;
    ModrtPinnedHostExtension pinned;
  };
  if (registered.device == nullptr) Fail("ValueError", "a device layer needs its device");
  DeviceLayer layer = registered;
  // A part that needs another is absent without it.
  if (layer.queues == nullptr) {
    layer.foreign_streams = nullptr;
    layer.timed_waits = nullptr;
    layer.graphs = nullptr;
  }
  if (layer.graphs == nullptr) layer.graph_updates = nullptr;
  static std::mutex mu;
  static std::deque<Registration> registrations;
  std::lock_guard lock(mu);
  Registration& r =
      registrations.emplace_back(Registration{layer, AttributeTable(), {}, {}, {}, {}});
  const ModrtExtension* head = nullptr;
  if (layer.pinned_host != nullptr) {
    r.pinned = PinnedHostTable(layer);
    r.pinned.base.next = head;
    head = &r.pinned.base;
  }
  if (layer.graphs != nullptr) {
    r.graphs = GraphTable(layer);
    r.graphs.base.next = head;
    head = &r.graphs.base;
  }
  if (layer.queues != nullptr) {
    r.streams = StreamTable(layer);
    r.streams.base.next = head;
    head = &r.streams.base;
  }
  if (layer.ranged_copies != nullptr) {
    r.ranged = RangedCopyTable();
    r.ranged.base.next = head;
    head = &r.ranged.base;
  }
  r.attributes.base.next = head;
  ModrtDeviceApi table = DeviceTable();
  table.self = &r.layer;
  table.extensions = &r.attributes.base;
  return table;
}

}  // namespace internal

// Registers `device_api.<kind>`: the C table and the extension chain of
// what `layer` has.
inline void RegisterDeviceLayer(const std::string& kind, const DeviceLayer& layer) {
  const ModrtDeviceApi table = internal::DeviceApiTableOf(layer);
  Check(Core().register_device_api(kind.c_str(), &table));
}

// A backend with a device and no optional part.
inline void RegisterDeviceAPI(const std::string& kind, DeviceAPI* api) {
  DeviceLayer layer;
  layer.device = api;
  RegisterDeviceLayer(kind, layer);
}

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_DEVICE_REGISTRATION_H_
