// Recorded launches (plugin ABI 1.1, ModrtGraphExtension) on OpenCL without
// cl_khr_command_buffer: while a stream captures (Stream::capture), each
// launch is kept as a cl_kernel of its own with its arguments set once, at
// record time; a replay is then only the clEnqueueNDRangeKernel calls, with
// no per-launch event (the first waits for one user event, set once the last
// is enqueued).
#ifndef MODRT_BACKENDS_OPENCL_OPENCL_GRAPHS_H_
#define MODRT_BACKENDS_OPENCL_OPENCL_GRAPHS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opencl_driver.h"

namespace modrt {
namespace opencl {

// One launch as the module would enqueue it: its program and kernel name,
// argument values (PackedArgs) and the trailing __local size, and its range.
struct LaunchToRecord {
  cl_program program;
  const std::string& name;
  const PackedArgs& args;
  bool has_dyn_shared;
  size_t dyn_shared_bytes;
  const size_t* global;  // 3 dimensions
  const size_t* local;   // 3 dimensions, or null: the driver picks
};

class Graph {
 public:
  explicit Graph(int device_id) : device_id_(device_id) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Appends a launch. Launches of one kernel with the same arguments share
  // one cl_kernel; others get a cl_kernel of their own, so that arguments
  // set for one are never those of another.
  void Record(const LaunchToRecord& launch);
  // Enqueues every launch on `queue`, in order.
  void Launch(cl_command_queue queue);
  // Takes the launches of `other`, a capture just ended (graph_update),
  // which must be as many: replays enqueued before keep theirs (an enqueued
  // command holds its kernel and its argument values).
  void Replace(Graph&& other);

 private:
  struct Kernel {
    cl_kernel kernel = nullptr;  // owned
    std::string name;            // for error messages
  };
  struct Recorded {
    const Kernel* kernel;  // in kernels_
    size_t global[3];
    size_t local[3];
    bool has_local;
  };

  const int device_id_;
  std::mutex mu_;  // a replay and an update of this graph from two threads
  std::vector<Recorded> launches_;
  // Each distinct (program, name, argument bytes): its kernel.
  std::map<std::string, Kernel> kernels_;
};

// Ever, per device, for opencl.submission_count: launches enqueued one by
// one, graph recordings completed (a capture, or a rebound replay's
// re-recording), graph replays enqueued.
struct SubmissionCounts {
  std::atomic<int64_t> launches{0};
  std::atomic<int64_t> graph_recordings{0};
  std::atomic<int64_t> graph_replays{0};
};
// Device `device_id`'s counts; the caller has checked the id.
SubmissionCounts& CountsOf(int device_id);

// The device layer's graphs and their in-place updates.
void AddGraphs(plugin::DeviceLayer* layer);

}  // namespace opencl
}  // namespace modrt

#endif  // MODRT_BACKENDS_OPENCL_OPENCL_GRAPHS_H_
