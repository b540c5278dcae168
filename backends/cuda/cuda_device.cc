// CUDA's device API: memory and copies on the driver API, and the native
// device layer (plugin_api.h, ModrtStreamExtension and ModrtGraphExtension):
// each modrt stream is a CU_STREAM_NON_BLOCKING stream, each event a CUevent
// (device-timed when asked), copies on a stream are cuMemcpy*Async, and a
// graph is a stream capture instantiated into a CUgraphExec. The logic is
// IndexedDeviceAPI's (modrt/plugin/indexed_device.h, shared with ROCm); this
// file names the driver's entry points for it.
//
// The NULL stream is the legacy default stream: the device's default modrt
// stream, drained by Sync (cuCtxSynchronize, which also drains every other
// stream of the context).
#include <string>

#include "backends/cuda/cuda_driver.h"
#include "modrt/plugin/indexed_device.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace cuda {
namespace {

struct CudaDriverTraits {
  using Driver = Workspace;
  using Api = CuApi;
  using Status = CUresult;
  using Stream = CUstream;
  using Event = CUevent;
  using Graph = CUgraph;
  using GraphExec = CUgraphExec;
  using DevicePtr = CUdeviceptr;
  static const CuApi& ApiOf(const Workspace& ws) { return ws.cu(); }

  static constexpr Status kNotReady = CUDA_ERROR_NOT_READY;
  static constexpr unsigned kStreamFlags = kStreamNonBlocking;
  static constexpr unsigned kEventTimed = kEventDefault;
  static constexpr unsigned kEventUntimed = kEventDisableTiming;
  static constexpr unsigned kPinnedFlags = kMemHostAllocPortable;
  static constexpr int kCaptureMode = kCaptureModeThreadLocal;
  static constexpr const char* kDisplayName = "CUDA";
  static constexpr const char* kDefaultQueue = "the CUDA context's legacy default stream (NULL)";
  static constexpr const char* kQueue = "a CUDA stream (CU_STREAM_NON_BLOCKING)";
  static constexpr const char* kPinnedHost =
      "page-locked host memory from cuMemHostAlloc (CU_MEMHOSTALLOC_PORTABLE)";

  static constexpr auto kMalloc = MODRT_DRIVER_CALL(CuApi, cuMemAlloc);
  static constexpr auto kFree = MODRT_DRIVER_CALL(CuApi, cuMemFree);
  static constexpr auto kCopyIn = MODRT_DRIVER_CALL(CuApi, cuMemcpyHtoD);
  static constexpr auto kCopyOut = MODRT_DRIVER_CALL(CuApi, cuMemcpyDtoH);
  static constexpr auto kSynchronize = MODRT_DRIVER_CALL(CuApi, cuCtxSynchronize);
  static constexpr auto kStreamCreate = MODRT_DRIVER_CALL(CuApi, cuStreamCreate);
  static constexpr auto kStreamDestroy = MODRT_DRIVER_CALL(CuApi, cuStreamDestroy);
  static constexpr auto kStreamSynchronize = MODRT_DRIVER_CALL(CuApi, cuStreamSynchronize);
  static constexpr auto kStreamWaitEvent = MODRT_DRIVER_CALL(CuApi, cuStreamWaitEvent);
  static constexpr auto kEventCreate = MODRT_DRIVER_CALL(CuApi, cuEventCreate);
  static constexpr auto kEventRecord = MODRT_DRIVER_CALL(CuApi, cuEventRecord);
  static constexpr auto kEventQuery = MODRT_DRIVER_CALL(CuApi, cuEventQuery);
  static constexpr auto kEventSynchronize = MODRT_DRIVER_CALL(CuApi, cuEventSynchronize);
  static constexpr auto kEventElapsedTime = MODRT_DRIVER_CALL(CuApi, cuEventElapsedTime);
  static constexpr auto kEventDestroy = MODRT_DRIVER_CALL(CuApi, cuEventDestroy);
  static constexpr auto kCopyInAsync = MODRT_DRIVER_CALL(CuApi, cuMemcpyHtoDAsync);
  static constexpr auto kCopyOutAsync = MODRT_DRIVER_CALL(CuApi, cuMemcpyDtoHAsync);
  static constexpr auto kCopyDeviceAsync = MODRT_DRIVER_CALL(CuApi, cuMemcpyDtoDAsync);
  static constexpr auto kHostAlloc = MODRT_DRIVER_CALL(CuApi, cuMemHostAlloc);
  static constexpr auto kHostFree = MODRT_DRIVER_CALL(CuApi, cuMemFreeHost);

  // Graphs: every CUDA driver modrt loads has them (resolved at load).
  static std::string GraphsMissing(const Workspace&) { return ""; }
  static constexpr auto kBeginCapture = MODRT_DRIVER_CALL(CuApi, cuStreamBeginCapture);
  static constexpr auto kEndCapture = MODRT_DRIVER_CALL(CuApi, cuStreamEndCapture);
  static constexpr auto kGraphLaunch = MODRT_DRIVER_CALL(CuApi, cuGraphLaunch);
  static constexpr auto kGraphExecDestroy = MODRT_DRIVER_CALL(CuApi, cuGraphExecDestroy);
  static constexpr auto kGraphDestroy = MODRT_DRIVER_CALL(CuApi, cuGraphDestroy);
  static constexpr const char* kInstantiateName = "cuGraphInstantiateWithFlags";
  static CUresult Instantiate(const CuApi& cu, CUgraphExec* exec, CUgraph graph) {
    return cu.cuGraphInstantiate(exec, graph, 0);
  }
  static constexpr const char* kExecUpdateName = "cuGraphExecUpdate";
  static CUresult ExecUpdate(const CuApi& cu, CUgraphExec exec, CUgraph graph) {
    // CUgraphExecUpdateResultInfo: result, error node, error-from node.
    struct {
      int result;
      void* error_node;
      void* error_from_node;
    } info{};
    return cu.cuGraphExecUpdate(exec, graph, &info);
  }
};

}  // namespace

void RegisterDeviceApi() {
  static plugin::IndexedDeviceAPI<CudaDriverTraits> api;
  plugin::RegisterDeviceLayer(kBackendIdentity.name, api.Layer());
}

}  // namespace cuda
}  // namespace modrt
