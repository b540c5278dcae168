// The CUDA driver TEST DOUBLE's streams, events, async copies, page-locked
// memory (each a wrapper of driver_test_double.h's) and graphs by stream
// capture (cuda_driver_test_double.cc describes the double).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "backends/cuda/testing/driver_test_double.h"

using namespace driver_double;  // NOLINT(build/namespaces)

extern "C" {

// --- streams, events, async copies ---

EXPORT int cuStreamCreate(void** stream, unsigned int flags) {
  return StreamCreate("cuStreamCreate", stream, flags);
}
EXPORT int cuStreamDestroy_v2(void* stream) { return StreamDestroy("cuStreamDestroy", stream); }
EXPORT int cuStreamSynchronize(void* stream) {
  return StreamSynchronize("cuStreamSynchronize", stream);
}
EXPORT int cuStreamWaitEvent(void* stream, void* event, unsigned int) {
  return StreamWaitEvent("cuStreamWaitEvent", stream, event);
}
EXPORT int cuEventCreate(void** event, unsigned int flags) {
  return EventCreate("cuEventCreate", event, flags, (flags & 2) == 0);  // CU_EVENT_DISABLE_TIMING
}
EXPORT int cuEventRecord(void* event, void* stream) {
  return EventRecord("cuEventRecord", event, stream);
}
EXPORT int cuEventQuery(void* event) { return EventQuery("cuEventQuery", event); }
EXPORT int cuEventSynchronize(void* event) { return EventSynchronize("cuEventSynchronize", event); }
EXPORT int cuEventElapsedTime(float* ms, void* start, void* end) {
  return EventElapsedTime("cuEventElapsedTime", ms, start, end);
}
EXPORT int cuEventDestroy_v2(void* event) { return EventDestroy("cuEventDestroy", event); }

EXPORT int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void* src, size_t bytes,
                                void* stream) {
  return AsyncCopy("cuMemcpyHtoDAsync", reinterpret_cast<void*>(dst), src, bytes, stream, src);
}

EXPORT int cuMemcpyDtoHAsync_v2(void* dst, unsigned long long src, size_t bytes, void* stream) {
  return AsyncCopy("cuMemcpyDtoHAsync", dst, reinterpret_cast<const void*>(src), bytes, stream,
                   dst);
}

EXPORT int cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src, size_t bytes,
                                void* stream) {
  return AsyncCopy("cuMemcpyDtoDAsync", reinterpret_cast<void*>(dst),
                   reinterpret_cast<const void*>(src), bytes, stream, nullptr);
}

// --- graphs by stream capture ---

EXPORT int cuStreamBeginCapture_v2(void* stream, int mode) {
  auto* s = static_cast<Stream*>(stream);
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuStreamBeginCapture\", \"stream\": " + StreamId(stream) +
              ", \"mode\": " + std::to_string(mode) + "}\n";
  if (s == nullptr) return kCaptureUnsupported;  // the legacy stream cannot be captured
  if (s->capture != nullptr) return kInvalidValue;
  s->capture = std::make_unique<Graph>();
  s->capture->id = next_id++;
  return kSuccess;
}

EXPORT int cuStreamEndCapture(void* stream, void** graph) {
  auto* s = static_cast<Stream*>(stream);
  std::lock_guard lock(mu);
  if (s == nullptr || s->capture == nullptr) return kInvalidValue;
  std::unique_ptr<Graph> g = std::move(s->capture);
  log_text += "{\"call\": \"cuStreamEndCapture\", \"stream\": " + StreamId(stream) +
              ", \"graph\": " + std::to_string(g->id) +
              ", \"launches\": " + std::to_string(g->launches.size()) + "}\n";
  if (int code = InjectedLocked("cuStreamEndCapture")) return code;
  *graph = g.release();
  return kSuccess;
}

EXPORT int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  auto* g = static_cast<Graph*>(graph);
  if (g == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  auto e = std::make_unique<Graph>(*g);
  e->id = next_id++;
  log_text += "{\"call\": \"cuGraphInstantiateWithFlags\", \"graph\": " + std::to_string(g->id) +
              ", \"exec\": " + std::to_string(e->id) + "}\n";
  *exec = e.release();
  return kSuccess;
}

EXPORT int cuGraphLaunch(void* exec, void* stream) {
  auto* e = static_cast<Graph*>(exec);
  if (e == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("cuGraphLaunch")) return code;
  clock_ms += static_cast<double>(e->launches.size());
  std::string kernels, params;
  for (const Launch& l : e->launches) {
    kernels += (kernels.empty() ? "" : ", ") + Quote(l.kernel);
    params += (params.empty() ? "" : ", ") + Quote(l.params);
  }
  log_text += "{\"call\": \"cuGraphLaunch\", \"exec\": " + std::to_string(e->id) +
              ", \"stream\": " + StreamId(stream) + ", \"kernels\": [" + kernels +
              "], \"params\": [" + params + "]}\n";
  return kSuccess;
}

EXPORT int cuGraphExecDestroy(void* exec) {
  if (exec == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuGraphExecDestroy\", \"exec\": " +
              std::to_string(static_cast<Graph*>(exec)->id) + "}\n";
  delete static_cast<Graph*>(exec);
  return kSuccess;
}

EXPORT int cuGraphDestroy(void* graph) {
  if (graph == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuGraphDestroy\", \"graph\": " +
              std::to_string(static_cast<Graph*>(graph)->id) + "}\n";
  delete static_cast<Graph*>(graph);
  return kSuccess;
}

// The executable graph takes the captured graph's launch parameters when
// the two have the same kernels in the same order.
EXPORT int cuGraphExecUpdate_v2(void* exec, void* graph, void* result_info) {
  auto* e = static_cast<Graph*>(exec);
  auto* g = static_cast<Graph*>(graph);
  if (e == nullptr || g == nullptr || result_info == nullptr) return kInvalidValue;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("cuGraphExecUpdate")) return code;
  bool same = e->launches.size() == g->launches.size();
  for (size_t i = 0; same && i < e->launches.size(); ++i) {
    same = e->launches[i].kernel == g->launches[i].kernel;
  }
  log_text += "{\"call\": \"cuGraphExecUpdate\", \"exec\": " + std::to_string(e->id) +
              ", \"graph\": " + std::to_string(g->id) +
              ", \"updated\": " + (same ? "true" : "false") + "}\n";
  if (!same) return kGraphExecUpdateFailure;
  e->launches = g->launches;
  return kSuccess;
}

// --- page-locked host memory ---

EXPORT int cuMemHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
  return HostAlloc("cuMemHostAlloc", ptr, bytes, flags);
}
EXPORT int cuMemFreeHost(void* ptr) { return HostFree("cuMemFreeHost", ptr); }

}  // extern "C"
