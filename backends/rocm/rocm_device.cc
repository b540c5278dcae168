// ROCm's device API: memory and copies on the HIP runtime, and the native
// device layer (plugin_api.h, ModrtStreamExtension and the pinned-memory
// extension): each modrt stream is a hipStreamNonBlocking stream, each event
// a hipEvent_t (device-timed when asked), copies on a stream are
// hipMemcpy*Async, pinned host memory is hipHostMalloc, another library's
// hipStream_t can be adopted, and a graph is a stream capture instantiated
// into a hipGraphExec_t (updated in place for a rebound replay) where the HIP
// runtime has graphs. The logic is IndexedDeviceAPI's
// (modrt/plugin/indexed_device.h, shared with CUDA); this file names the HIP
// entry points for it.
//
// The NULL stream is the null stream: the device's default modrt stream,
// drained by Sync (hipDeviceSynchronize, which also drains every other stream).
#include <string>

#include "backends/rocm/rocm_driver.h"
#include "modrt/plugin/indexed_device.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace rocm {
namespace {

struct HipDriverTraits {
  using Driver = Workspace;
  using Api = HipApi;
  using Status = hipError_t;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  using Graph = hipGraph_t;
  using GraphExec = hipGraphExec_t;
  using DevicePtr = void*;
  static const HipApi& ApiOf(const Workspace& ws) { return ws.hip(); }

  static constexpr Status kNotReady = hipErrorNotReady;
  static constexpr unsigned kStreamFlags = kStreamNonBlocking;
  static constexpr unsigned kEventTimed = kEventDefault;
  static constexpr unsigned kEventUntimed = kEventDisableTiming;
  static constexpr unsigned kPinnedFlags = kHostMallocPortable;
  static constexpr const char* kDisplayName = "HIP";
  static constexpr const char* kDefaultQueue = "the device's HIP null stream";
  static constexpr const char* kQueue = "a HIP stream (hipStreamNonBlocking)";
  static constexpr const char* kPinnedHost =
      "page-locked host memory from hipHostMalloc (hipHostMallocPortable)";

  static constexpr auto kMalloc = MODRT_DRIVER_CALL(HipApi, hipMalloc);
  static constexpr auto kFree = MODRT_DRIVER_CALL(HipApi, hipFree);
  static constexpr auto kCopyIn = MODRT_DRIVER_CALL(HipApi, hipMemcpyHtoD);
  static constexpr auto kCopyOut = MODRT_DRIVER_CALL(HipApi, hipMemcpyDtoH);
  static constexpr auto kSynchronize = MODRT_DRIVER_CALL(HipApi, hipDeviceSynchronize);
  static constexpr auto kStreamCreate = MODRT_DRIVER_CALL(HipApi, hipStreamCreateWithFlags);
  static constexpr auto kStreamDestroy = MODRT_DRIVER_CALL(HipApi, hipStreamDestroy);
  static constexpr auto kStreamSynchronize = MODRT_DRIVER_CALL(HipApi, hipStreamSynchronize);
  static constexpr auto kStreamWaitEvent = MODRT_DRIVER_CALL(HipApi, hipStreamWaitEvent);
  static constexpr auto kEventCreate = MODRT_DRIVER_CALL(HipApi, hipEventCreateWithFlags);
  static constexpr auto kEventRecord = MODRT_DRIVER_CALL(HipApi, hipEventRecord);
  static constexpr auto kEventQuery = MODRT_DRIVER_CALL(HipApi, hipEventQuery);
  static constexpr auto kEventSynchronize = MODRT_DRIVER_CALL(HipApi, hipEventSynchronize);
  static constexpr auto kEventElapsedTime = MODRT_DRIVER_CALL(HipApi, hipEventElapsedTime);
  static constexpr auto kEventDestroy = MODRT_DRIVER_CALL(HipApi, hipEventDestroy);
  static constexpr auto kCopyInAsync = MODRT_DRIVER_CALL(HipApi, hipMemcpyHtoDAsync);
  static constexpr auto kCopyOutAsync = MODRT_DRIVER_CALL(HipApi, hipMemcpyDtoHAsync);
  static constexpr auto kCopyDeviceAsync = MODRT_DRIVER_CALL(HipApi, hipMemcpyDtoDAsync);
  static constexpr auto kHostAlloc = MODRT_DRIVER_CALL(HipApi, hipHostMalloc);
  static constexpr auto kHostFree = MODRT_DRIVER_CALL(HipApi, hipHostFree);

  // Graphs: HIP's stream capture, where the runtime has it.
  static std::string GraphsMissing(const Workspace& ws) { return ws.graphs_missing(); }
  static constexpr int kCaptureMode = kCaptureModeThreadLocal;
  static constexpr auto kBeginCapture = MODRT_DRIVER_CALL(HipApi, hipStreamBeginCapture);
  static constexpr auto kEndCapture = MODRT_DRIVER_CALL(HipApi, hipStreamEndCapture);
  static constexpr auto kGraphLaunch = MODRT_DRIVER_CALL(HipApi, hipGraphLaunch);
  static constexpr auto kGraphExecDestroy = MODRT_DRIVER_CALL(HipApi, hipGraphExecDestroy);
  static constexpr auto kGraphDestroy = MODRT_DRIVER_CALL(HipApi, hipGraphDestroy);
  static constexpr const char* kInstantiateName = "hipGraphInstantiate";
  static hipError_t Instantiate(const HipApi& hip, hipGraphExec_t* exec, hipGraph_t graph) {
    return hip.hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
  }
  static constexpr const char* kExecUpdateName = "hipGraphExecUpdate";
  static hipError_t ExecUpdate(const HipApi& hip, hipGraphExec_t exec, hipGraph_t graph) {
    hipGraphNode_t error_node = nullptr;
    int result = 0;  // hipGraphExecUpdateResult
    return hip.hipGraphExecUpdate(exec, graph, &error_node, &result);
  }
};

}  // namespace

void RegisterDeviceApi() {
  static IndexedDeviceAPI<HipDriverTraits> api;
  RegisterDeviceLayer(kBackendIdentity.name, api.Layer());
}

}  // namespace rocm
}  // namespace modrt
