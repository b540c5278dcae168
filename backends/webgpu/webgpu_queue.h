// The device layer's queues and graphs of webgpu(0) (plugin::Queues and
// plugin::Graphs, filling plugin_api.h's ModrtStreamExtension and
// ModrtGraphExtension): streams, events with device timestamps, copies with
// offsets, and recorded launches.
//
// WebGPU gives a device one queue. Every modrt stream of webgpu(0) is that
// queue, in submission order: the launches of all streams go, in the order
// they are made, into the one batch (webgpu_submit.cc) and the one sequence of
// submissions. The queue is native; overlap between streams is not (WebGPU has
// none to give). So stream_wait_event has nothing to do: what an event follows
// was submitted before anything a stream submits after it.
//
// - Events (webgpu_events.cc): a submission; complete when wgpu reports the
//   work submitted up to it done (wgpuQueueOnSubmittedWorkDone, delivered by
//   device polling). Where the device has WGPUFeatureName_TimestampQuery an
//   event also writes a timestamp (a compute pass's timestampWrites), resolved
//   into a buffer and read back for elapsed_ms; where it has not, elapsed_ms
//   raises NotImplementedError saying so.
// - Copies (webgpu_copies.cc): host to device through wgpuQueueWriteBuffer
//   (which copies the host bytes at once), device to host through a staging
//   buffer mapped when its copy completed (finished by the wait that observes
//   it), device to device with wgpuCommandEncoderCopyBufferToBuffer.
// - Graphs (webgpu_graphs.cc): between graph_begin and graph_end a launch on
//   the capturing stream is recorded (its pipeline, bind groups, uniform slot
//   and workgroups) instead of run; graph_launch encodes every recorded
//   dispatch into one compute pass of the batch and submits it once (behind
//   running work, the next wait does: webgpu_device.h).
//   A replay that rebinds buffers is captured anew and graph_update swaps
//   that recording in, so it too is one command buffer.
#ifndef MODRT_BACKENDS_WEBGPU_WEBGPU_QUEUE_H_
#define MODRT_BACKENDS_WEBGPU_WEBGPU_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

struct Kernel;
struct LaunchArgs;

// Synchronous copies of `nbytes` at byte `offset` of a buffer, in order with
// the launches before them; an offset or size that is not a multiple of 4
// (WebGPU copies whole words) reads the words at its edges back first.
void ReadBytes(Workspace& ws, const Buffer& buf, uint64_t offset, void* dst, size_t nbytes);
void WriteBytes(Workspace& ws, const Buffer& buf, uint64_t offset, const void* src, size_t nbytes);
// ValueError unless [offset, offset + nbytes) lies in the buffer.
void CheckRange(const Buffer& buf, uint64_t offset, size_t nbytes, const char* what);

// Reading a buffer back, the one way for copies and event timestamps:
// MapForReading asks for the mapping of its first `size` bytes, and `mapped`
// says when it is done; once it is, CopyOutOfMapped checks the mapping,
// copies `nbytes` after `skip` bytes to `dst` and unmaps the buffer. `what`
// names the bytes in errors ("12 bytes", "an event's timestamp").
using MapResult = CallbackResult<std::pair<WGPUMapAsyncStatus, std::string>>;
void MapForReading(Workspace& ws, WGPUBuffer buffer, uint64_t size,
                   const std::shared_ptr<MapResult>& mapped);
void CopyOutOfMapped(Workspace& ws, WGPUBuffer buffer, MapResult& mapped, uint64_t skip, void* dst,
                     size_t nbytes, const std::string& what);

// A point in the queue's submissions (webgpu_events.cc).
class Event;

// Launches recorded between graph_begin and graph_end (webgpu_graphs.cc).
class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();
  // Records a launch: its bind groups (made now, on the graph's own uniform
  // buffers, whose slot holds the launch's scalars) and its pipeline.
  void Record(Workspace& ws, const Kernel& kernel, WGPUComputePipeline pipeline,
              const LaunchArgs& args);
  // Every dispatch into one compute pass of the batch. Callers hold submit_mu().
  void Encode(Workspace& ws) const;
  size_t size() const { return dispatches_.size(); }
  // Exchanges this graph's recording with `other`'s (a rebound replay's
  // re-recording). Callers hold submit_mu(), so no replay encodes meanwhile.
  void Swap(Graph& other);

 private:
  struct Dispatch {
    WGPUComputePipeline pipeline;  // a reference of the graph's own
    size_t binding;                // index in bindings_
    uint32_t uniform_offset;
    uint32_t grid[3];
  };
  // A kernel's bind groups for one set of buffers and one uniform buffer.
  struct Binding {
    std::vector<WGPUBindGroup> groups;
    std::vector<uint32_t> uniforms_per_group;
  };
  // The graph's uniform slot for `uniform`, written to one of its buffers.
  std::pair<WGPUBuffer, uint32_t> UniformSlot(Workspace& ws, const Kernel& kernel,
                                              const LaunchArgs& args);

  std::vector<Dispatch> dispatches_;
  std::vector<Binding> bindings_;
  // bindings_ by (kernel, uniform buffer, buffer ids).
  std::map<std::pair<std::pair<const Kernel*, WGPUBuffer>, std::vector<uint64_t>>, size_t>
      binding_index_;
  std::vector<WGPUBuffer> uniform_buffers_;
  uint64_t uniform_used_ = 0;  // bytes used of the last uniform buffer
};

// A modrt stream of webgpu(0): a name for the device's one queue, and the
// graph it is capturing, if any. The core says in a launch's arguments
// whether its stream captures (ABI 1.2), so a launch looks here only then;
// from an older core every launch looks, hence the lock.
class Stream {
 public:
  // The graph a launch on this stream is recorded into, or null.
  Graph* capture();
  // RuntimeError when it is capturing already.
  void BeginCapture();
  // The graph captured (RuntimeError when it is not capturing).
  std::unique_ptr<Graph> EndCapture();

 private:
  std::mutex mu_;
  std::unique_ptr<Graph> capture_;
};

// The device layer's queues and graphs of webgpu(0), one for the process.
class Queue final : public plugin::Queues, public plugin::Graphs, public plugin::GraphUpdates {
 public:
  static Queue& Get();

  void* StreamCreate(int device_id) override;
  void StreamDestroy(int device_id, void* stream) override;
  void StreamSynchronize(int device_id, void* stream) override;
  void StreamWaitEvent(int device_id, void* stream, void* event) override;
  void* EventRecord(int device_id, void* stream, bool timing) override;
  bool EventQuery(int device_id, void* event) override;
  void EventSynchronize(int device_id, void* event) override;
  double EventElapsedMs(int device_id, void* start, void* end) override;
  void EventDestroy(int device_id, void* event) override;

  void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                         void* stream) override;
  void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes,
                       void* stream) override;
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override;
  const char* QueueDescription(int, bool) override {
    return "the WebGPU device's one queue (every stream is it, in submission order); a graph "
           "replays as one command buffer, recorded anew when a replay rebinds buffers";
  }

  void GraphBegin(int device_id, void* stream) override;
  void* GraphEnd(int device_id, void* stream) override;
  void GraphLaunch(int device_id, void* graph, void* stream) override;
  // Ends the capture on `stream` (a rebound replay's launches, recorded
  // anew) and makes `graph` replay that recording from now on.
  void GraphUpdate(int device_id, void* stream, void* graph) override;
  void GraphDestroy(int device_id, void* graph) override;

  // A launch encoded one by one (not in a graph), for the counts below.
  void CountLaunch() { launches_.fetch_add(1, std::memory_order_relaxed); }
  // For webgpu.submission_count: launches encoded one by one ("launches"),
  // graph recordings completed ("graph_recordings": captures and rebound
  // replays' re-recordings), graph replays submitted ("graph_replays").
  int64_t SubmissionCount(std::string_view name) const;

  // The graph a launch on `stream` (the launch's, ModrtKernelArgs; null: the
  // default stream) is recorded into, or null when it is not capturing.
  Graph* CaptureOf(void* stream) { return StreamOf(stream).capture(); }

  // Completes the device-to-host copies made before `up_to` (a readback
  // number; UINT64_MAX: all) whose batches were submitted: each waits for
  // its copy, then lands in host memory. With `wait` false, returns false at
  // the first not yet mapped; false too at the first not yet submitted.
  bool FinishReadbacks(uint64_t up_to, bool wait);
  // The number the next readback gets.
  uint64_t NextReadback();

 private:
  struct Readback {
    uint64_t number;
    WGPUBuffer staging;
    uint64_t size;  // of the staging buffer
    uint64_t skip;  // bytes before the copy's first in the staging buffer
    void* host;
    size_t nbytes;
    std::shared_ptr<MapResult> mapped;
    uint64_t batch;  // the batch its copy is in
    // Whether its mapping was asked for: at once when its batch was submitted
    // with it, else by the wait that finishes it (webgpu_device.h).
    bool map_asked;
  };

  std::mutex readback_mu_;
  std::deque<Readback> readbacks_;
  uint64_t readbacks_made_ = 0;

  // The stream a handle names (null: the default stream).
  Stream& StreamOf(void* stream) {
    return stream == nullptr ? default_stream_ : *static_cast<Stream*>(stream);
  }
  Stream default_stream_;
  // Taken by the capture on `stream` (RuntimeError when it has none).
  std::unique_ptr<Graph> TakeCapture(void* stream);

  std::atomic<int64_t> launches_{0}, graph_recordings_{0}, graph_replays_{0};
};

}  // namespace webgpu
}  // namespace modrt

#endif  // MODRT_BACKENDS_WEBGPU_WEBGPU_QUEUE_H_
