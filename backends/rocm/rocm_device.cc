// ROCm's device API: memory and copies on the HIP runtime, and the native
// device layer (plugin_api.h, ModrtStreamExtension and the pinned-memory
// extension): each modrt stream is a hipStreamNonBlocking stream, each event
// a hipEvent_t (device-timed when asked), copies on a stream are
// hipMemcpy*Async, pinned host memory is hipHostMalloc, and another library's
// hipStream_t can be adopted. No graph extension: graphs replay the core's
// list on the stream (HIP graphs are left for a machine with an AMD GPU).
//
// The NULL stream is the null stream: the device's default modrt stream,
// drained by Sync (hipDeviceSynchronize, which also drains every other stream).
#include <cstdint>
#include <string>

#include "backends/rocm/rocm_driver.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace rocm {
namespace {

char* At(const DLTensor* t, size_t offset) {
  return static_cast<char*>(t->data) + t->byte_offset + offset;
}

hipStream_t AsStream(void* stream) { return static_cast<hipStream_t>(stream); }
hipEvent_t AsEvent(void* event) { return static_cast<hipEvent_t>(event); }

class RocmDeviceAPI final : public DriverDeviceAPI<Workspace> {
 public:
  void GetAttr(int id, std::string_view name, Ret* ret) override {
    Workspace::Get().Attr(id, name, ret);
  }
  void* Alloc(int id, size_t nbytes) override {
    Workspace& ws = Active(id);
    return ws.Malloc(nbytes);
  }
  // Runs from tensor destructors: never throws.
  void Free(int id, void* ptr) override {
    Workspace& ws = Workspace::Get();
    ws.ActivateQuietly(id);
    ws.FreeQuietly(ptr);
  }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    if (nbytes == 0) return;
    Active(t->device.device_id).CopyIn(At(t, 0), src, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    if (nbytes == 0) return;
    Active(t->device.device_id).CopyOut(dst, At(t, 0), nbytes);
  }
  void Sync(int id) override { Active(id).Synchronize(); }

  // --- streams and events ---
  bool HasStreams() const override { return true; }
  void* StreamCreate(int id) override {
    Workspace& ws = Active(id);
    hipStream_t stream = nullptr;
    ws.Check(ws.hip().hipStreamCreateWithFlags(&stream, kStreamNonBlocking),
             StrCat("hipStreamCreateWithFlags on rocm(", id, ")"));
    return stream;
  }
  void StreamDestroy(int id, void* stream) override {
    Workspace& ws = Active(id);
    ws.Check(ws.hip().hipStreamDestroy(AsStream(stream)), "hipStreamDestroy");
  }
  void StreamSynchronize(int id, void* stream) override {
    Workspace& ws = Active(id);
    ws.Check(ws.hip().hipStreamSynchronize(AsStream(stream)),
             StrCat("hipStreamSynchronize on rocm(", id, ")"));
  }
  void* EventRecord(int id, void* stream, bool timing) override {
    Workspace& ws = Active(id);
    hipEvent_t event = nullptr;
    ws.Check(ws.hip().hipEventCreateWithFlags(&event, timing ? kEventDefault : kEventDisableTiming),
             "hipEventCreateWithFlags");
    const hipError_t status = ws.hip().hipEventRecord(event, AsStream(stream));
    if (status != hipSuccess) {
      ws.hip().hipEventDestroy(event);
      ws.Check(status, "hipEventRecord");
    }
    return event;
  }
  bool EventQuery(int id, void* event) override {
    Workspace& ws = Active(id);
    const hipError_t status = ws.hip().hipEventQuery(AsEvent(event));
    if (status == hipErrorNotReady) return false;
    ws.Check(status, "hipEventQuery");
    return true;
  }
  void EventSynchronize(int id, void* event) override {
    Workspace& ws = Active(id);
    ws.Check(ws.hip().hipEventSynchronize(AsEvent(event)),
             StrCat("hipEventSynchronize on rocm(", id, ")"));
  }
  double EventElapsedMs(int id, void* start, void* end) override {
    Workspace& ws = Active(id);
    float ms = 0;
    ws.Check(ws.hip().hipEventElapsedTime(&ms, AsEvent(start), AsEvent(end)),
             "hipEventElapsedTime");
    return ms;
  }
  void EventDestroy(int id, void* event) override {
    Workspace& ws = Active(id);
    ws.Check(ws.hip().hipEventDestroy(AsEvent(event)), "hipEventDestroy");
  }
  void StreamWaitEvent(int id, void* stream, void* event) override {
    Workspace& ws = Active(id);
    ws.Check(ws.hip().hipStreamWaitEvent(AsStream(stream), AsEvent(event), 0),
             "hipStreamWaitEvent");
  }
  void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                         void* stream) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(dst->device.device_id);
    ws.Check(ws.hip().hipMemcpyHtoDAsync(At(dst, offset), const_cast<void*>(host), nbytes,
                                         AsStream(stream)),
             StrCat("hipMemcpyHtoDAsync of ", nbytes, " bytes"));
  }
  void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes,
                       void* stream) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(src->device.device_id);
    ws.Check(ws.hip().hipMemcpyDtoHAsync(host, At(src, offset), nbytes, AsStream(stream)),
             StrCat("hipMemcpyDtoHAsync of ", nbytes, " bytes"));
  }
  void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                          size_t nbytes, void* stream) override {
    if (nbytes == 0) return;
    Workspace& ws = Active(dst->device.device_id);
    ws.Check(ws.hip().hipMemcpyDtoDAsync(At(dst, dst_offset), At(src, src_offset), nbytes,
                                         AsStream(stream)),
             StrCat("hipMemcpyDtoDAsync of ", nbytes, " bytes"));
  }

  // A hipStream_t made by another library (PyTorch's ROCm build, CuPy): the
  // handle is the stream; its maker destroys it.
  bool HasStreamAdopt() const override { return true; }
  void* StreamAdopt(int id, uint64_t external) override {
    Active(id);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(external));
  }
  const char* QueueDescription(int, bool is_default) override {
    return is_default ? "the device's HIP null stream" : "a HIP stream (hipStreamNonBlocking)";
  }

  // --- pinned host memory ---
  bool HasPinnedHost() const override { return true; }
  void* PinnedHostAlloc(int id, size_t nbytes) override {
    Workspace& ws = Active(id);
    void* ptr = nullptr;
    ws.Check(ws.hip().hipHostMalloc(&ptr, nbytes, kHostMallocPortable),
             StrCat("hipHostMalloc of ", nbytes, " bytes of pinned host memory"));
    return ptr;
  }
  void PinnedHostFree(int id, void* ptr) override {
    Workspace& ws = Active(id);
    ws.Check(ws.hip().hipHostFree(ptr), "hipHostFree");
  }
  const char* PinnedHostDescription() const override {
    return "page-locked host memory from hipHostMalloc (hipHostMallocPortable)";
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
  static RocmDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace rocm
}  // namespace modrt
