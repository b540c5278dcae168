// The CUDA driver TEST DOUBLE's streams, events, async copies and graphs
// (cuda_driver_test_double.cc describes the double).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "backends/cuda/testing/cuda_driver_test_double.h"

namespace {

using namespace cuda_double;  // NOLINT(build/namespaces)

// An async copy, done at once; logged with its stream, size, and whether
// its host side (`host`, null for device to device) is page-locked memory.
int AsyncCopy(const char* call, void* dst, const void* src, size_t bytes, void* stream,
              const void* host) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  std::memcpy(dst, src, bytes);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) +
              ", \"bytes\": " + std::to_string(bytes) + ", \"pinned\": " +
              (host == nullptr ? "null" : PinnedLocked(host, bytes) ? "true" : "false") + "}\n";
  return kSuccess;
}

}  // namespace

extern "C" {

// --- streams, events, async copies ---

EXPORT int cuStreamCreate(void** stream, unsigned int flags) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("cuStreamCreate")) return code;
  auto s = std::make_unique<Stream>();
  s->id = next_id++;
  log_text += "{\"call\": \"cuStreamCreate\", \"stream\": " + std::to_string(s->id) +
              ", \"flags\": " + std::to_string(flags) + "}\n";
  *stream = s.release();
  return kSuccess;
}

EXPORT int cuStreamDestroy_v2(void* stream) {
  if (stream == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuStreamDestroy\", \"stream\": " + StreamId(stream) + "}\n";
  delete static_cast<Stream*>(stream);
  return kSuccess;
}

EXPORT int cuStreamSynchronize(void* stream) {
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuStreamSynchronize\", \"stream\": " + StreamId(stream) + "}\n";
  return InjectedLocked("cuStreamSynchronize");
}

EXPORT int cuEventCreate(void** event, unsigned int flags) {
  std::lock_guard lock(mu);
  auto e = std::make_unique<Event>();
  e->id = next_id++;
  e->timing = (flags & 2) == 0;  // CU_EVENT_DISABLE_TIMING
  log_text += "{\"call\": \"cuEventCreate\", \"event\": " + std::to_string(e->id) +
              ", \"timing\": " + (e->timing ? "true" : "false") + "}\n";
  *event = e.release();
  return kSuccess;
}

EXPORT int cuEventRecord(void* event, void* stream) {
  auto* e = static_cast<Event*>(event);
  if (e == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  e->recorded = true;
  e->time_ms = clock_ms;
  log_text += "{\"call\": \"cuEventRecord\", \"event\": " + std::to_string(e->id) +
              ", \"stream\": " + StreamId(stream) + "}\n";
  return kSuccess;
}

EXPORT int cuEventQuery(void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  return InjectedLocked("cuEventQuery");
}

EXPORT int cuEventSynchronize(void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuEventSynchronize\", \"event\": " +
              std::to_string(static_cast<Event*>(event)->id) + "}\n";
  return InjectedLocked("cuEventSynchronize");
}

EXPORT int cuEventElapsedTime(float* ms, void* start, void* end) {
  auto* a = static_cast<Event*>(start);
  auto* b = static_cast<Event*>(end);
  if (a == nullptr || b == nullptr || !a->timing || !b->timing) return kInvalidHandle;
  if (!a->recorded || !b->recorded) return kInvalidHandle;
  std::lock_guard lock(mu);
  *ms = static_cast<float>(b->time_ms - a->time_ms);
  log_text += "{\"call\": \"cuEventElapsedTime\", \"start\": " + std::to_string(a->id) +
              ", \"end\": " + std::to_string(b->id) + "}\n";
  return kSuccess;
}

EXPORT int cuEventDestroy_v2(void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuEventDestroy\", \"event\": " +
              std::to_string(static_cast<Event*>(event)->id) + "}\n";
  delete static_cast<Event*>(event);
  return kSuccess;
}

EXPORT int cuStreamWaitEvent(void* stream, void* event, unsigned int) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += "{\"call\": \"cuStreamWaitEvent\", \"stream\": " + StreamId(stream) +
              ", \"event\": " + std::to_string(static_cast<Event*>(event)->id) + "}\n";
  return kSuccess;
}

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
              ", \"graph\": " + std::to_string(g->id) + ", \"updated\": " +
              (same ? "true" : "false") + "}\n";
  if (!same) return kGraphExecUpdateFailure;
  e->launches = g->launches;
  return kSuccess;
}

// --- page-locked host memory ---

EXPORT int cuMemHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked("cuMemHostAlloc")) return code;
  auto* p = static_cast<char*>(std::malloc(bytes == 0 ? 1 : bytes));
  if (p == nullptr) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  pinned[p] = bytes;
  log_text += "{\"call\": \"cuMemHostAlloc\", \"bytes\": " + std::to_string(bytes) +
              ", \"flags\": " + std::to_string(flags) + "}\n";
  *ptr = p;
  return kSuccess;
}

EXPORT int cuMemFreeHost(void* ptr) {
  std::lock_guard lock(mu);
  auto it = pinned.find(static_cast<const char*>(ptr));
  if (it == pinned.end()) return kInvalidValue;
  log_text += "{\"call\": \"cuMemFreeHost\", \"bytes\": " + std::to_string(it->second) + "}\n";
  pinned.erase(it);
  std::free(ptr);
  return kSuccess;
}

}  // extern "C"
