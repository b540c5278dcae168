// The device layer (device.h) of an indexed driver (driver.h: devices
// 0..count-1, memory addressed by device pointers, a current device per
// thread) whose queues are streams, like the CUDA driver API and HIP: memory,
// copies, streams, events with device timing, async and device-to-device
// copies, page-locked host memory, foreign streams and graphs by stream
// capture, written once over a small traits struct that names the driver's
// entry points (header-only, plugin side, like driver.h).
//
// `T`, the driver's traits:
//   using Driver = ...;  the runtime's LazyDriverState, with Get(), count(),
//                        static kDeviceType, Activate(id) (throws),
//                        ActivateQuietly(id) noexcept, Check(status, what)
//                        (throws an Error naming `what` and the driver's
//                        error) and Attr(id, name, ret);
//   using Api = ...;     the driver's entry points (a struct of function
//                        pointers), from `static const Api& ApiOf(const Driver&)`;
//   using Status, Stream, Event, Graph, GraphExec, DevicePtr = ...;  (Status
//                        0 is success, as CUDA_SUCCESS and hipSuccess are)
//   static constexpr Status kNotReady;  an event query's "not yet"
//   static constexpr unsigned kStreamFlags, kEventTimed, kEventUntimed,
//                        kPinnedFlags;
//   static constexpr int kCaptureMode;
//   static constexpr const char* kDisplayName ("CUDA"), kDefaultQueue,
//                        kQueue, kPinnedHost;  (words for errors and listings)
//   static constexpr DriverCall<Api, ...> kMalloc, kFree, kCopyIn, kCopyOut,
//                        kSynchronize, kStreamCreate, kStreamDestroy,
//                        kStreamSynchronize, kStreamWaitEvent, kEventCreate,
//                        kEventRecord, kEventQuery, kEventSynchronize,
//                        kEventElapsedTime, kEventDestroy, kCopyInAsync,
//                        kCopyOutAsync, kCopyDeviceAsync, kHostAlloc,
//                        kHostFree, kBeginCapture, kEndCapture, kGraphLaunch,
//                        kGraphExecDestroy, kGraphDestroy (each
//                        MODRT_DRIVER_CALL), plus
//   static Status Instantiate(const Api&, GraphExec*, Graph);
//   static Status ExecUpdate(const Api&, GraphExec, Graph);
//                        (their signatures differ between drivers), named in
//                        errors by kInstantiateName and kExecUpdateName, and
//   static std::string GraphsMissing(const Driver&);  "" when the driver has
//                        the graph entry points, else why not.
#ifndef MODRT_PLUGIN_INDEXED_DEVICE_H_
#define MODRT_PLUGIN_INDEXED_DEVICE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace plugin MODRT_PLUGIN_HIDDEN {

// One entry point of a driver's API struct and the name errors give it.
template <typename Api, typename Fn>
struct DriverCall {
  Fn Api::* entry;
  const char* name;
};
template <typename Api, typename Fn>
constexpr DriverCall<Api, Fn> MakeDriverCall(Fn Api::* entry, const char* name) {
  return {entry, name};
}
// MODRT_DRIVER_CALL(CuApi, cuStreamCreate): the member, named as spelled.
#define MODRT_DRIVER_CALL(api, member) ::modrt::plugin::MakeDriverCall(&api::member, #member)

// Every part of the device layer (device.h) at once; Layer() hands them out.
template <typename T>
class IndexedDeviceAPI final : public DriverDeviceAPI<typename T::Driver>,
                               public RangedCopies,
                               public Queues,
                               public ForeignStreams,
                               public Graphs,
                               public GraphUpdates,
                               public PinnedHost {
 public:
  using Driver = typename T::Driver;
  using Stream = typename T::Stream;
  using Event = typename T::Event;
  using DevicePtr = typename T::DevicePtr;

  void GetAttr(int id, std::string_view name, Ret* ret) override {
    Driver::Get().Attr(id, name, ret);
  }
  void* Alloc(int id, size_t nbytes) override {
    Driver& d = Active(id);
    DevicePtr ptr{};
    Call(d, T::kMalloc, StrCat(" of ", nbytes, " bytes on ", Device(id)), &ptr,
         std::max<size_t>(nbytes, 1));
    return reinterpret_cast<void*>(ptr);
  }
  // Runs from tensor destructors: never throws. The memory was allocated on
  // this device, so the device is usable.
  void Free(int id, void* ptr) override {
    Driver& d = Driver::Get();
    d.ActivateQuietly(id);
    (T::ApiOf(d).*T::kFree.entry)(reinterpret_cast<DevicePtr>(ptr));
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    CopyRangeFromHost(src, t, 0, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    CopyRangeToHost(t, 0, dst, nbytes);
  }
  void Sync(int id) override { Call(Active(id), T::kSynchronize, StrCat(" on ", Device(id))); }

  void CopyRangeFromHost(const void* src, DLTensor* t, size_t offset, size_t nbytes) override {
    if (nbytes == 0) return;
    Driver& d = Active(t->device.device_id);
    Call(d, T::kCopyIn, " (host-to-device copy)", At(t, offset), const_cast<void*>(src), nbytes);
    // From pageable memory the copy may return before the DMA landed,
    // ordered only on the default stream, which a non-blocking stream does
    // not wait for: the copy is complete before a launch on any stream.
    Call(d, T::kStreamSynchronize, StrCat(" after ", T::kCopyIn.name), Stream{});
  }
  void CopyRangeToHost(const DLTensor* t, size_t offset, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Call(Active(t->device.device_id), T::kCopyOut, " (device-to-host copy)", dst, At(t, offset),
         nbytes);
  }

  // --- streams and events ---
  void* StreamCreate(int id) override {
    Stream stream{};
    Call(Active(id), T::kStreamCreate, StrCat(" on ", Device(id)), &stream, T::kStreamFlags);
    return stream;
  }
  void StreamDestroy(int id, void* stream) override {
    Call(Active(id), T::kStreamDestroy, "", AsStream(stream));
  }
  void StreamSynchronize(int id, void* stream) override {
    Call(Active(id), T::kStreamSynchronize, StrCat(" on ", Device(id)), AsStream(stream));
  }
  void* EventRecord(int id, void* stream, bool timing) override {
    Driver& d = Active(id);
    Event event{};
    Call(d, T::kEventCreate, "", &event, timing ? T::kEventTimed : T::kEventUntimed);
    const auto status = (T::ApiOf(d).*T::kEventRecord.entry)(event, AsStream(stream));
    if (status != 0) {
      (T::ApiOf(d).*T::kEventDestroy.entry)(event);
      d.Check(status, T::kEventRecord.name);
    }
    return event;
  }
  bool EventQuery(int id, void* event) override {
    Driver& d = Active(id);
    const auto status = (T::ApiOf(d).*T::kEventQuery.entry)(AsEvent(event));
    if (status == T::kNotReady) return false;
    d.Check(status, T::kEventQuery.name);
    return true;
  }
  void EventSynchronize(int id, void* event) override {
    Call(Active(id), T::kEventSynchronize, StrCat(" on ", Device(id)), AsEvent(event));
  }
  double EventElapsedMs(int id, void* start, void* end) override {
    float ms = 0;
    Call(Active(id), T::kEventElapsedTime, "", &ms, AsEvent(start), AsEvent(end));
    return ms;
  }
  void EventDestroy(int id, void* event) override {
    Call(Active(id), T::kEventDestroy, "", AsEvent(event));
  }
  void StreamWaitEvent(int id, void* stream, void* event) override {
    Call(Active(id), T::kStreamWaitEvent, "", AsStream(stream), AsEvent(event), 0u);
  }
  void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                         void* stream) override {
    if (nbytes == 0) return;
    Call(Active(dst->device.device_id), T::kCopyInAsync, StrCat(" of ", nbytes, " bytes"),
         At(dst, offset), const_cast<void*>(host), nbytes, AsStream(stream));
  }
  void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes,
                       void* stream) override {
    if (nbytes == 0) return;
    Call(Active(src->device.device_id), T::kCopyOutAsync, StrCat(" of ", nbytes, " bytes"), host,
         At(src, offset), nbytes, AsStream(stream));
  }
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override {
    if (nbytes == 0) return;
    Call(Active(dst->device.device_id), T::kCopyDeviceAsync, StrCat(" of ", nbytes, " bytes"),
         At(dst, dst_offset), At(src, src_offset), nbytes, AsStream(stream));
  }

  // A stream made by another library (PyTorch, CuPy): the handle is the
  // stream; its maker destroys it.
  void* StreamAdopt(int id, uint64_t external) override {
    Active(id);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(external));
  }
  const char* QueueDescription(int, bool is_default) override {
    return is_default ? T::kDefaultQueue : T::kQueue;
  }

  // --- pinned host memory ---
  void* PinnedHostAlloc(int id, size_t nbytes) override {
    void* ptr = nullptr;
    Call(Active(id), T::kHostAlloc, StrCat(" of ", nbytes, " bytes of pinned host memory"), &ptr,
         nbytes, T::kPinnedFlags);
    return ptr;
  }
  void PinnedHostFree(int id, void* ptr) override { Call(Active(id), T::kHostFree, "", ptr); }
  const char* PinnedHostDescription() const override { return T::kPinnedHost; }

  // --- graphs: stream capture ---
  void GraphBegin(int id, void* stream) override {
    // The default stream cannot be captured, nor any stream where the driver
    // lacks graphs: the core then keeps its own list of the launches
    // (Graph.native is False).
    if (stream == nullptr) {
      Fail("ValueError", "a ", T::kDisplayName,
           " graph is captured on a stream of its own: ", Device(id), "'s default stream (",
           T::kDefaultQueue, ") cannot be captured; capture on a modrt.Stream(device)");
    }
    Driver& d = Active(id);
    const std::string missing = T::GraphsMissing(d);
    if (!missing.empty()) Fail("RuntimeError", missing);
    Call(d, T::kBeginCapture, "", AsStream(stream), T::kCaptureMode);
  }
  void* GraphEnd(int id, void* stream) override {
    Driver& d = Active(id);
    typename T::GraphExec exec{};
    typename T::Graph graph = EndCapture(d, stream);
    const auto status = T::Instantiate(T::ApiOf(d), &exec, graph);
    // The executable graph is independent of the graph it was made from.
    (T::ApiOf(d).*T::kGraphDestroy.entry)(graph);
    d.Check(status, T::kInstantiateName);
    return exec;
  }
  void GraphLaunch(int id, void* graph, void* stream) override {
    Call(Active(id), T::kGraphLaunch, "", AsExec(graph), AsStream(stream));
  }
  // A rebound replay: the capture of its launches updates the executable
  // graph's kernel parameters in place (the topology is the same
  // launches'). Launches of it already submitted keep their old ones.
  void GraphUpdate(int id, void* stream, void* graph) override {
    Driver& d = Active(id);
    typename T::Graph captured = EndCapture(d, stream);
    const auto status = T::ExecUpdate(T::ApiOf(d), AsExec(graph), captured);
    (T::ApiOf(d).*T::kGraphDestroy.entry)(captured);
    d.Check(status, T::kExecUpdateName);
  }
  void GraphDestroy(int id, void* graph) override {
    Call(Active(id), T::kGraphExecDestroy, "", AsExec(graph));
  }

  // Every part but timed waits: the driver's stream wait takes no timeout.
  DeviceLayer Layer() {
    DeviceLayer layer;
    layer.device = this;
    layer.ranged_copies = this;
    layer.queues = this;
    layer.foreign_streams = this;
    layer.graphs = this;
    layer.graph_updates = this;
    layer.pinned_host = this;
    return layer;
  }

 private:
  static Driver& Active(int id) {
    Driver& d = Driver::Get();
    d.Activate(id);
    return d;
  }
  // "cuda(0)"
  static std::string Device(int id) {
    return StrCat(DeviceKindName(Driver::kDeviceType), "(", id, ")");
  }
  // Calls `call` with `params`; fails naming it, then `detail`, and the
  // driver's error.
  template <typename Entry, typename... Params>
  static void Call(Driver& d, const Entry& call, std::string_view detail, Params... params) {
    const auto status = (T::ApiOf(d).*call.entry)(params...);
    if (status != 0) d.Check(status, StrCat(call.name, detail));
  }
  static DevicePtr At(const DLTensor* t, size_t offset) {
    return reinterpret_cast<DevicePtr>(static_cast<char*>(t->data) + t->byte_offset + offset);
  }
  static Stream AsStream(void* stream) { return static_cast<Stream>(stream); }
  static Event AsEvent(void* event) { return static_cast<Event>(event); }
  static typename T::GraphExec AsExec(void* graph) {
    return static_cast<typename T::GraphExec>(graph);
  }
  static typename T::Graph EndCapture(Driver& d, void* stream) {
    typename T::Graph graph{};
    Call(d, T::kEndCapture, "", AsStream(stream), &graph);
    return graph;
  }
};

}  // namespace plugin
}  // namespace modrt

#endif  // MODRT_PLUGIN_INDEXED_DEVICE_H_
