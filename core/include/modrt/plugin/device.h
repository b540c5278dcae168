// A plugin's device layer, as interfaces of its own (the way IREE's HAL and
// ggml-backend cut theirs): the device every backend has (DeviceAPI: memory,
// whole-tensor copies, attributes), and the optional parts, each present by
// a pointer in the DeviceLayer a backend registers and absent when null:
// ranged copies, queues (streams, events, copies on a queue) with foreign
// streams and timed waits, graphs with in-place updates, and pinned host
// memory. Each optional interface corresponds to one C table on the device
// API's extension chain (plugin_api.h, device_extensions.h) or to the
// optional entries of one; device_registration.h fills those tables from
// what is present.
#ifndef MODRT_PLUGIN_DEVICE_H_
#define MODRT_PLUGIN_DEVICE_H_

#include <cstdint>
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

// The device: what every backend has. One device family; implementations
// live for the whole process. Every method but the first two may assume the
// device exists.
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
};

// Copies of `nbytes` at byte `offset` of a tensor's memory
// (ModrtRangedCopyExtension). Absent: the core stages a part through host
// memory.
class RangedCopies {
 public:
  virtual ~RangedCopies() = default;
  virtual void CopyRangeFromHost(const void* src, DLTensor* dst, size_t offset, size_t nbytes) = 0;
  virtual void CopyRangeToHost(const DLTensor* src, size_t offset, void* dst, size_t nbytes) = 0;
};

// Native queues and events (ModrtStreamExtension). `stream` NULL is the
// default queue (the one Sync drains); a launch finds its queue in its
// arguments (PackedArgs::NativeStream). Offsets count from the tensor's
// first byte (data + byte_offset). Absent: the core runs every stream's
// launches on the backend's one queue and orders them itself.
class Queues {
 public:
  virtual ~Queues() = default;
  virtual void* StreamCreate(int device_id) = 0;
  virtual void StreamDestroy(int device_id, void* stream) = 0;
  virtual void StreamSynchronize(int device_id, void* stream) = 0;
  // With `timing`, the event carries a device timestamp for EventElapsedMs.
  virtual void* EventRecord(int device_id, void* stream, bool timing) = 0;
  virtual bool EventQuery(int device_id, void* event) = 0;
  virtual void EventSynchronize(int device_id, void* event) = 0;
  // Device milliseconds from `start` to `end`; NotImplementedError when the
  // device has no timestamps (never host time).
  virtual double EventElapsedMs(int device_id, void* start, void* end) = 0;
  virtual void EventDestroy(int device_id, void* event) = 0;
  virtual void StreamWaitEvent(int device_id, void* stream, void* event) = 0;
  // May return before the copy is done: the core keeps `host` alive and
  // unchanged until an event recorded after it completed.
  virtual void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                                 void* stream) = 0;
  virtual void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes,
                               void* stream) = 0;
  virtual void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst,
                                  size_t dst_offset, size_t nbytes, void* stream) = 0;
  // What the default queue or a StreamCreate queue is, in words (static
  // text); nullptr: the core describes it.
  virtual const char* QueueDescription(int device_id, bool is_default) = 0;
};

// Queues made by another library (CUstream, hipStream_t as an integer), used
// as StreamCreate's are, never destroyed by modrt (stream_adopt).
class ForeignStreams {
 public:
  virtual ~ForeignStreams() = default;
  virtual void* StreamAdopt(int device_id, uint64_t external) = 0;
};

// A wait on the caller's thread that the driver bounds by a timeout
// (stream_wait_for); true when `stream` completed. Only where the driver's
// own wait takes one: absent, the core's worker thread waits.
class TimedWaits {
 public:
  virtual ~TimedWaits() = default;
  virtual bool StreamWaitFor(int device_id, void* stream, double timeout_s) = 0;
};

// Recorded launches (ModrtGraphExtension; needs Queues). Between GraphBegin
// and GraphEnd, the launches this plugin receives for `stream` are recorded,
// not run. Absent: the core keeps its own list of the launches.
class Graphs {
 public:
  virtual ~Graphs() = default;
  virtual void GraphBegin(int device_id, void* stream) = 0;
  virtual void* GraphEnd(int device_id, void* stream) = 0;
  virtual void GraphLaunch(int device_id, void* graph, void* stream) = 0;
  virtual void GraphDestroy(int device_id, void* graph) = 0;
};

// Ends GraphBegin's capture on `stream` into `graph` (GraphEnd's, same
// launches), updated in place (graph_update; needs Graphs). Absent: a
// replay that rebinds buffers runs the core's list.
class GraphUpdates {
 public:
  virtual ~GraphUpdates() = default;
  virtual void GraphUpdate(int device_id, void* stream, void* graph) = 0;
};

// Page-locked host memory the device copies to and from directly
// (ModrtPinnedHostExtension).
class PinnedHost {
 public:
  virtual ~PinnedHost() = default;
  virtual void* PinnedHostAlloc(int device_id, size_t nbytes) = 0;
  virtual void PinnedHostFree(int device_id, void* ptr) = 0;
  // What it is, in words (static text).
  virtual const char* PinnedHostDescription() const = 0;
};

// What a backend registers: its device and the optional parts it has, each
// living for the process. A part that needs another (ForeignStreams,
// TimedWaits and Graphs need Queues; GraphUpdates needs Graphs) is absent
// without it.
struct DeviceLayer {
  DeviceAPI* device = nullptr;
  RangedCopies* ranged_copies = nullptr;
  Queues* queues = nullptr;
  ForeignStreams* foreign_streams = nullptr;
  TimedWaits* timed_waits = nullptr;
  Graphs* graphs = nullptr;
  GraphUpdates* graph_updates = nullptr;
  PinnedHost* pinned_host = nullptr;
};

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_DEVICE_H_
