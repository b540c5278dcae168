#include "opencl_graphs.h"

#include <memory>
#include <utility>
#include <vector>

namespace modrt {
namespace opencl {

Graph::~Graph() {
  const ClApi& cl = Workspace::Get().cl();
  // Replays still enqueued keep their kernels: OpenCL frees a released
  // kernel once no enqueued command uses it.
  for (auto& [key, k] : kernels_) cl.clReleaseKernel(k.kernel);
}

void Graph::Record(const LaunchToRecord& launch) {
  const ClApi& cl = Workspace::Get().cl();
  const PackedArgs& args = launch.args;
  // What the cl_kernel's state is: the program, the kernel and each argument's bytes.
  std::string key(reinterpret_cast<const char*>(&launch.program), sizeof(launch.program));
  key += launch.name;
  key += '\0';
  for (size_t i = 0; i < args.ptrs.size(); ++i) {
    key.append(reinterpret_cast<const char*>(&args.sizes[i]), sizeof(size_t));
    key.append(static_cast<const char*>(args.ptrs[i]), args.sizes[i]);
  }
  if (launch.has_dyn_shared) {
    key.append(reinterpret_cast<const char*>(&launch.dyn_shared_bytes), sizeof(size_t));
  }
  std::lock_guard lock(mu_);
  auto [found, added] = kernels_.try_emplace(std::move(key));
  Kernel& k = found->second;
  if (added) {
    cl_int err = CL_SUCCESS;
    k.kernel = cl.clCreateKernel(launch.program, launch.name.c_str(), &err);
    if (err != CL_SUCCESS) {
      kernels_.erase(found);
      MODRT_CL_CHECK(err, StrCat("creating kernel '", launch.name, "' for a graph"));
    }
    k.name = launch.name;
    cl_uint index = 0;
    for (; index < args.ptrs.size(); ++index) {
      err = cl.clSetKernelArg(k.kernel, index, args.sizes[index], args.ptrs[index]);
      if (err != CL_SUCCESS) break;
    }
    if (err == CL_SUCCESS && launch.has_dyn_shared) {
      // Dynamic shared memory is the kernel's trailing __local pointer.
      err = cl.clSetKernelArg(k.kernel, index, launch.dyn_shared_bytes, nullptr);
    }
    if (err != CL_SUCCESS) {
      cl.clReleaseKernel(k.kernel);
      kernels_.erase(found);
      MODRT_CL_CHECK(err, StrCat("setting argument ", index, " of ", launch.name));
    }
  }
  Recorded r{&k, {}, {}, launch.local != nullptr};
  for (int d = 0; d < 3; ++d) {
    r.global[d] = launch.global[d];
    r.local[d] = launch.local != nullptr ? launch.local[d] : 0;
  }
  launches_.push_back(r);
}

void Graph::Launch(cl_command_queue queue) {
  std::lock_guard lock(mu_);
  if (launches_.empty()) return;
  Workspace& ws = Workspace::Get();
  const ClApi& cl = ws.cl();
  // The first launch waits for a user event, set once every launch is
  // enqueued: PoCL then runs them back to back instead of waking its worker
  // threads for each one (what it does when launches come slower than they
  // run, and what made a replay cost as much as launching one by one).
  cl_int err = CL_SUCCESS;
  cl_event gate = cl.clCreateUserEvent(ws.device(device_id_).context, &err);
  MODRT_CL_CHECK(err, "clCreateUserEvent");
  struct OpenGate {
    const ClApi& cl;
    cl_event gate;
    // Also when an enqueue failed: the launches before it run.
    ~OpenGate() {
      cl.clSetUserEventStatus(gate, CL_COMPLETE);
      cl.clReleaseEvent(gate);
    }
  } open{cl, gate};
  for (size_t i = 0; i < launches_.size(); ++i) {
    const Recorded& r = launches_[i];
    const cl_int status = cl.clEnqueueNDRangeKernel(queue, r.kernel->kernel, 3, nullptr, r.global,
                                                    r.has_local ? r.local : nullptr, i == 0 ? 1 : 0,
                                                    i == 0 ? &gate : nullptr, nullptr);
    if (status != CL_SUCCESS) {
      Fail("RuntimeError", "OpenCL launch of ", r.kernel->name, " (", i + 1, " of ",
           launches_.size(), " in a graph replay) failed: ", ClError(status),
           "; the launches before it run");
    }
  }
}

void Graph::Replace(Graph&& other) {
  // `other` is a capture just ended, which no other thread holds.
  std::lock_guard lock(mu_);
  if (other.launches_.size() != launches_.size()) {
    Fail("RuntimeError", "an OpenCL graph update recorded ", other.launches_.size(),
         " launches for a graph of ", launches_.size());
  }
  launches_.swap(other.launches_);
  kernels_.swap(other.kernels_);
}

SubmissionCounts& CountsOf(int device_id) {
  // Sized once, at the first count: no lock on a launch's way.
  static std::vector<SubmissionCounts> counts(static_cast<size_t>(Workspace::Get().count()));
  return counts[static_cast<size_t>(device_id)];
}

Stream::Stream(cl_command_queue queue) : queue(queue) {}

Stream::~Stream() = default;

namespace {

// Graphs without cl_khr_command_buffer, which PoCL does not offer: a captured
// launch is kept as a cl_kernel with its arguments set (Graph), a replay
// enqueues them, a rebound replay is re-recorded (GraphUpdate).
class OpenCLGraphs final : public plugin::Graphs, public plugin::GraphUpdates {
 public:
  void GraphBegin(int id, void* stream) override {
    Stream& s = StreamOf(id, stream);
    if (s.capture != nullptr)
      Fail("RuntimeError", "this OpenCL queue is already capturing a graph");
    s.capture = std::make_unique<Graph>(id);
  }
  void* GraphEnd(int id, void* stream) override {
    std::unique_ptr<Graph> graph = std::move(StreamOf(id, stream).capture);
    if (graph == nullptr) Fail("RuntimeError", "no graph is being captured on this OpenCL queue");
    CountsOf(id).graph_recordings.fetch_add(1);
    return graph.release();  // owned by the core until GraphDestroy
  }
  void GraphLaunch(int id, void* graph, void* stream) override {
    static_cast<Graph*>(graph)->Launch(QueueOf(id, stream));
    CountsOf(id).graph_replays.fetch_add(1);
  }
  void GraphDestroy(int, void* graph) override {
    std::unique_ptr<Graph> owned(static_cast<Graph*>(graph));  // freed on return
  }
  void GraphUpdate(int id, void* stream, void* graph) override {
    std::unique_ptr<Graph> recorded(static_cast<Graph*>(GraphEnd(id, stream)));
    static_cast<Graph*>(graph)->Replace(std::move(*recorded));
  }
};

}  // namespace

void AddGraphs(plugin::DeviceLayer* layer) {
  static OpenCLGraphs graphs;
  layer->graphs = &graphs;
  layer->graph_updates = &graphs;
}

}  // namespace opencl
}  // namespace modrt
