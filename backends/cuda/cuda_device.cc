// CUDA's device API: memory and copies on the driver API, and the native
// device layer (plugin_api.h, ModrtStreamExtension and ModrtGraphExtension):
// each modrt stream is a CU_STREAM_NON_BLOCKING stream, each event a CUevent
// (device-timed when asked), copies on a stream are cuMemcpy*Async, and a
// graph is a stream capture instantiated into a CUgraphExec.
//
// The NULL stream is the legacy default stream: the device's default modrt
// stream, drained by Sync (cuCtxSynchronize, which also drains every other
// stream of the context).
#include <cstdint>
#include <string>

#include "backends/cuda/cuda_driver.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace cuda {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

CUdeviceptr At(const DLTensor* t, size_t offset) {
  return reinterpret_cast<CUdeviceptr>(t->data) + t->byte_offset + offset;
}

CUstream AsStream(void* stream) { return static_cast<CUstream>(stream); }
CUevent AsEvent(void* event) { return static_cast<CUevent>(event); }

class CudaDeviceAPI final : public DriverDeviceAPI<Workspace> {
 public:
  void GetAttr(int id, std::string_view name, Ret* ret) override {
    Workspace::Get().Attr(id, name, ret);
  }
  void* Alloc(int id, size_t nbytes) override {
    Workspace& ws = Active(id);
    CUdeviceptr ptr = 0;
    ws.Check(ws.cu().cuMemAlloc(&ptr, std::max<size_t>(nbytes, 1)),
             StrCat("cuMemAlloc of ", nbytes, " bytes on cuda(", id, ")"));
    return reinterpret_cast<void*>(ptr);
  }
  // Runs from tensor destructors: never throws. The memory was allocated on
  // this device, so the device is usable.
  void Free(int id, void* ptr) override {
    Workspace& ws = Workspace::Get();
    ws.ActivateQuietly(id);
    ws.cu().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    CopyRangeFromHost(src, t, 0, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    CopyRangeToHost(t, 0, dst, nbytes);
  }
  void Sync(int id) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuCtxSynchronize(), StrCat("cuCtxSynchronize on cuda(", id, ")"));
  }

  bool HasRangedCopy() const override { return true; }
  void CopyRangeFromHost(const void* src, DLTensor* t, size_t offset, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(t->device.device_id);
    ws.Check(ws.cu().cuMemcpyHtoD(At(t, offset), src, nbytes),
             "cuMemcpyHtoD (host-to-device copy)");
    // From pageable memory cuMemcpyHtoD may return before the DMA landed,
    // ordered only on the legacy stream, which a non-blocking stream does not
    // wait for: the copy is complete before a launch on any stream.
    ws.Check(ws.cu().cuStreamSynchronize(nullptr), "cuStreamSynchronize after cuMemcpyHtoD");
  }
  void CopyRangeToHost(const DLTensor* t, size_t offset, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(t->device.device_id);
    ws.Check(ws.cu().cuMemcpyDtoH(dst, At(t, offset), nbytes),
             "cuMemcpyDtoH (device-to-host copy)");
  }

  // --- streams and events ---
  bool HasStreams() const override { return true; }
  void* StreamCreate(int id) override {
    Workspace& ws = Active(id);
    CUstream stream = nullptr;
    ws.Check(ws.cu().cuStreamCreate(&stream, kStreamNonBlocking),
             StrCat("cuStreamCreate on cuda(", id, ")"));
    return stream;
  }
  void StreamDestroy(int id, void* stream) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuStreamDestroy(AsStream(stream)), "cuStreamDestroy");
  }
  void StreamSynchronize(int id, void* stream) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuStreamSynchronize(AsStream(stream)),
             StrCat("cuStreamSynchronize on cuda(", id, ")"));
  }
  void* EventRecord(int id, void* stream, bool timing) override {
    Workspace& ws = Active(id);
    CUevent event = nullptr;
    ws.Check(ws.cu().cuEventCreate(&event, timing ? kEventDefault : kEventDisableTiming),
             "cuEventCreate");
    const CUresult status = ws.cu().cuEventRecord(event, AsStream(stream));
    if (status != CUDA_SUCCESS) {
      ws.cu().cuEventDestroy(event);
      ws.Check(status, "cuEventRecord");
    }
    return event;
  }
  bool EventQuery(int id, void* event) override {
    Workspace& ws = Active(id);
    const CUresult status = ws.cu().cuEventQuery(AsEvent(event));
    if (status == CUDA_ERROR_NOT_READY) return false;
    ws.Check(status, "cuEventQuery");
    return true;
  }
  void EventSynchronize(int id, void* event) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuEventSynchronize(AsEvent(event)),
             StrCat("cuEventSynchronize on cuda(", id, ")"));
  }
  double EventElapsedMs(int id, void* start, void* end) override {
    Workspace& ws = Active(id);
    float ms = 0;
    ws.Check(ws.cu().cuEventElapsedTime(&ms, AsEvent(start), AsEvent(end)), "cuEventElapsedTime");
    return ms;
  }
  void EventDestroy(int id, void* event) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuEventDestroy(AsEvent(event)), "cuEventDestroy");
  }
  void StreamWaitEvent(int id, void* stream, void* event) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuStreamWaitEvent(AsStream(stream), AsEvent(event), 0), "cuStreamWaitEvent");
  }
  void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                         void* stream) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(dst->device.device_id);
    ws.Check(ws.cu().cuMemcpyHtoDAsync(At(dst, offset), host, nbytes, AsStream(stream)),
             StrCat("cuMemcpyHtoDAsync of ", nbytes, " bytes"));
  }
  void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes,
                       void* stream) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(src->device.device_id);
    ws.Check(ws.cu().cuMemcpyDtoHAsync(host, At(src, offset), nbytes, AsStream(stream)),
             StrCat("cuMemcpyDtoHAsync of ", nbytes, " bytes"));
  }
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(dst->device.device_id);
    ws.Check(ws.cu().cuMemcpyDtoDAsync(At(dst, dst_offset), At(src, src_offset), nbytes,
                                       AsStream(stream)),
             StrCat("cuMemcpyDtoDAsync of ", nbytes, " bytes"));
  }

  // A CUstream made by another library (PyTorch, CuPy): the handle is the
  // stream; its maker destroys it.
  bool HasStreamAdopt() const override { return true; }
  void* StreamAdopt(int id, uint64_t external) override {
    Active(id);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(external));
  }
  const char* QueueDescription(int, bool is_default) override {
    return is_default ? "the CUDA context's legacy default stream (NULL)"
                      : "a CUDA stream (CU_STREAM_NON_BLOCKING)";
  }

  // --- pinned host memory ---
  bool HasPinnedHost() const override { return true; }
  void* PinnedHostAlloc(int id, size_t nbytes) override {
    Workspace& ws = Active(id);
    void* ptr = nullptr;
    ws.Check(ws.cu().cuMemHostAlloc(&ptr, nbytes, kMemHostAllocPortable),
             StrCat("cuMemHostAlloc of ", nbytes, " bytes of pinned host memory"));
    return ptr;
  }
  void PinnedHostFree(int id, void* ptr) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuMemFreeHost(ptr), "cuMemFreeHost");
  }
  const char* PinnedHostDescription() const override {
    return "page-locked host memory from cuMemHostAlloc (CU_MEMHOSTALLOC_PORTABLE)";
  }

  // --- graphs: stream capture ---
  bool HasGraphs() const override { return true; }
  void GraphBegin(int id, void* stream) override {
    // The legacy default stream cannot be captured; the core then keeps
    // its own list of the launches (Graph.native is False).
    if (stream == nullptr) {
      Fail("ValueError", "a CUDA graph is captured on a stream of its own: cuda(", id,
           ")'s default stream (the legacy NULL stream) cannot be captured; capture on a "
           "modrt.Stream(device)");
    }
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuStreamBeginCapture(AsStream(stream), kCaptureModeThreadLocal),
             "cuStreamBeginCapture");
  }
  void* GraphEnd(int id, void* stream) override {
    Workspace& ws = Active(id);
    CUgraph graph = nullptr;
    ws.Check(ws.cu().cuStreamEndCapture(AsStream(stream), &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    const CUresult status = ws.cu().cuGraphInstantiate(&exec, graph, 0);
    // The executable graph is independent of the graph it was made from.
    ws.cu().cuGraphDestroy(graph);
    ws.Check(status, "cuGraphInstantiateWithFlags");
    return exec;
  }
  void GraphLaunch(int id, void* graph, void* stream) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuGraphLaunch(static_cast<CUgraphExec>(graph), AsStream(stream)),
             "cuGraphLaunch");
  }
  // A rebound replay: the capture of its launches updates the executable
  // graph's kernel parameters in place (cuGraphExecUpdate; the topology is
  // the same launches'). Launches of it already submitted keep their old ones.
  bool HasGraphUpdate() const override { return true; }
  void GraphUpdate(int id, void* stream, void* graph) override {
    Workspace& ws = Active(id);
    CUgraph captured = nullptr;
    ws.Check(ws.cu().cuStreamEndCapture(AsStream(stream), &captured), "cuStreamEndCapture");
    // CUgraphExecUpdateResultInfo: result, error node, error-from node.
    struct {
      int result;
      void* error_node;
      void* error_from_node;
    } info{};
    const CUresult status =
        ws.cu().cuGraphExecUpdate(static_cast<CUgraphExec>(graph), captured, &info);
    ws.cu().cuGraphDestroy(captured);
    ws.Check(status, "cuGraphExecUpdate");
  }
  void GraphDestroy(int id, void* graph) override {
    Workspace& ws = Active(id);
    ws.Check(ws.cu().cuGraphExecDestroy(static_cast<CUgraphExec>(graph)), "cuGraphExecDestroy");
  }

 private:
  static Workspace& Active(int id) {
    Workspace& ws = Workspace::Get();
    ws.Activate(id);
    return ws;
  }
};

}  // namespace

void RegisterDeviceApi() {
  static CudaDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace cuda
}  // namespace modrt
