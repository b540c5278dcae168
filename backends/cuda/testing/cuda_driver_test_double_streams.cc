// The CUDA driver TEST DOUBLE's streams, events, async copies, page-locked
// memory (each a wrapper of driver_test_double.h's) and graphs by stream
// capture (cuda_driver_test_double.cc describes the double).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "tests/driver_doubles/driver_test_double.h"

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

// --- graphs by stream capture (driver_test_double.h) ---

EXPORT int cuStreamBeginCapture_v2(void* stream, int mode) {
  return BeginCapture("cuStreamBeginCapture", stream, mode);
}
EXPORT int cuStreamEndCapture(void* stream, void** graph) {
  return EndCapture("cuStreamEndCapture", stream, graph);
}
EXPORT int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  return GraphInstantiate("cuGraphInstantiateWithFlags", exec, graph);
}
EXPORT int cuGraphLaunch(void* exec, void* stream) {
  return GraphLaunch("cuGraphLaunch", exec, stream);
}
EXPORT int cuGraphExecDestroy(void* exec) { return GraphExecDestroy("cuGraphExecDestroy", exec); }
EXPORT int cuGraphDestroy(void* graph) { return GraphDestroy("cuGraphDestroy", graph); }
EXPORT int cuGraphExecUpdate_v2(void* exec, void* graph, void* result_info) {
  if (result_info == nullptr) return kInvalidValue;
  return GraphExecUpdate("cuGraphExecUpdate", exec, graph);
}

// --- page-locked host memory ---

EXPORT int cuMemHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
  return HostAlloc("cuMemHostAlloc", ptr, bytes, flags);
}
EXPORT int cuMemFreeHost(void* ptr) { return HostFree("cuMemFreeHost", ptr); }

}  // extern "C"
