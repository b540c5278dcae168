// Copies of webgpu(0) (webgpu_queue.h): ranges of a buffer to and from host
// memory, synchronous and on a stream, and device to device. WebGPU copies
// whole 4-byte words at word offsets; a range that is not whole words reads
// the words at its edges back, so the bytes beside it keep their values.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_queue.h"
#include "wgpu_native.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

uint64_t WordStart(uint64_t offset) { return offset / 4 * 4; }
uint64_t WordEnd(uint64_t end) { return (end + 3) / 4 * 4; }

// A map-readable buffer that `buf`'s words [start, start + size) are copied
// into, in the batch after the launches recorded before it. Callers hold
// submit_mu().
WGPUBuffer RecordReadbackLocked(Workspace& ws, const Buffer& buf, uint64_t start, uint64_t size) {
  const WgpuApi& api = ws.api();
  WGPUBufferDescriptor d{};
  d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
  d.size = size;
  WGPUBuffer staging = api.wgpuDeviceCreateBuffer(ws.device(), &d);
  if (staging == nullptr)
    Fail("RuntimeError", "webgpu: cannot create a staging buffer of ", size, " bytes");
  api.wgpuCommandEncoderCopyBufferToBuffer(ws.PendingLocked(), buf.buffer, start, staging, 0, size);
  return staging;
}

// RecordReadbackLocked's buffer, its batch submitted and its mapping asked
// for: `mapped` says when it is done. Callers hold submit_mu().
WGPUBuffer StageReadbackLocked(Workspace& ws, const Buffer& buf, uint64_t start, uint64_t size,
                               const std::shared_ptr<MapResult>& mapped) {
  WGPUBuffer staging = RecordReadbackLocked(ws, buf, start, size);
  ws.FlushLocked();
  MapForReading(ws, staging, size, mapped);
  return staging;
}

// `size` bytes of `data` written to `buf` at `start` in the batch, after the
// launches recorded before them, through a staging buffer of their own: a
// queue write would land before the batch. Callers hold submit_mu().
void UploadInBatchLocked(Workspace& ws, const Buffer& buf, uint64_t start, const void* data,
                         uint64_t size) {
  const WgpuApi& api = ws.api();
  WGPUBufferDescriptor d{};
  d.usage = WGPUBufferUsage_CopySrc;
  d.size = size;
  d.mappedAtCreation = true;
  WGPUBuffer staging = api.wgpuDeviceCreateBuffer(ws.device(), &d);
  if (staging == nullptr)
    Fail("RuntimeError", "webgpu: cannot create a staging buffer of ", size, " bytes");
  void* mapped = api.wgpuBufferGetMappedRange(staging, 0, size);
  if (mapped == nullptr) {
    api.wgpuBufferRelease(staging);
    Fail("RuntimeError", "webgpu: a staging buffer of ", size, " bytes did not map");
  }
  std::memcpy(mapped, data, size);
  api.wgpuBufferUnmap(staging);
  api.wgpuCommandEncoderCopyBufferToBuffer(ws.PendingLocked(), staging, 0, buf.buffer, start, size);
  api.wgpuBufferRelease(staging);  // the batch holds it until it ran
  ws.RecordedLocked();
}

// Copies `nbytes` from a mapped staging buffer (after `skip` bytes) to `dst`,
// then releases it.
void LandReadback(Workspace& ws, WGPUBuffer staging, MapResult& mapped, uint64_t skip, void* dst,
                  size_t nbytes) {
  const WgpuApi& api = ws.api();
  struct Release {
    const WgpuApi& api;
    WGPUBuffer b;
    ~Release() { api.wgpuBufferRelease(b); }
  } release{api, staging};
  CopyOutOfMapped(ws, staging, mapped, skip, dst, nbytes, std::to_string(nbytes) + " bytes");
}

const Buffer& BufferOf(const DLTensor* t) { return *static_cast<const Buffer*>(t->data); }

}  // namespace

void MapForReading(Workspace& ws, WGPUBuffer buffer, uint64_t size,
                   const std::shared_ptr<MapResult>& mapped) {
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_AllowSpontaneous;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* r, void*) {
    TakeInCallback<MapResult>(r)->Set({status, ToString(message)});
  };
  cb.userdata1 = ShareWithCallback(mapped);
  ws.api().wgpuBufferMapAsync(buffer, WGPUMapMode_Read, 0, size, cb);
}

void CopyOutOfMapped(Workspace& ws, WGPUBuffer buffer, MapResult& mapped, uint64_t skip, void* dst,
                     size_t nbytes, const std::string& what) {
  const WgpuApi& api = ws.api();
  const auto [status, message] = mapped.Take();
  if (status != WGPUMapAsyncStatus_Success) {
    Fail("RuntimeError", "webgpu: reading ", what, " back failed: ", message);
  }
  const void* data = api.wgpuBufferGetConstMappedRange(buffer, 0, WordEnd(skip + nbytes));
  if (data == nullptr) Fail("RuntimeError", "webgpu: ", what, " did not map for reading");
  std::memcpy(dst, static_cast<const uint8_t*>(data) + skip, nbytes);
  api.wgpuBufferUnmap(buffer);
}

void CheckRange(const Buffer& buf, uint64_t offset, size_t nbytes, const char* what) {
  if (offset > buf.size || nbytes > buf.size - offset) {
    Fail("ValueError", "webgpu: ", what, " ", nbytes, " bytes at offset ", offset,
         " overruns a buffer of ", buf.size);
  }
}

void ReadBytes(Workspace& ws, const Buffer& buf, uint64_t offset, void* dst, size_t nbytes) {
  if (nbytes == 0) return;
  CheckRange(buf, offset, nbytes, "copy from");
  const uint64_t start = WordStart(offset);
  auto mapped = std::make_shared<MapResult>();
  WGPUBuffer staging = nullptr;
  {
    std::lock_guard lock(ws.submit_mu());
    staging = StageReadbackLocked(ws, buf, start, WordEnd(offset + nbytes) - start, mapped);
  }
  ws.PollUntil([&] { return mapped->Done(); });
  LandReadback(ws, staging, *mapped, offset - start, dst, nbytes);
  if (std::string e = ws.TakeUncapturedError(); !e.empty()) Fail("RuntimeError", "webgpu: ", e);
}

void WriteBytes(Workspace& ws, const Buffer& buf, uint64_t offset, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  CheckRange(buf, offset, nbytes, "copy into");
  const uint64_t start = WordStart(offset);
  const uint64_t end = WordEnd(offset + nbytes);
  std::vector<uint8_t> words;
  const void* data = src;
  if (start != offset || end != offset + nbytes) {
    // The edge words as they are, with the range's bytes in between.
    words.resize(end - start);
    ReadBytes(ws, buf, start, words.data(), 4);
    ReadBytes(ws, buf, end - 4, words.data() + words.size() - 4, 4);
    std::memcpy(words.data() + (offset - start), src, nbytes);
    data = words.data();
  }
  std::lock_guard lock(ws.submit_mu());
  if (!ws.MaySubmitLocked()) {
    // Behind running work a submission would wait in the driver (webgpu_device.h).
    return UploadInBatchLocked(ws, buf, start, data, end - start);
  }
  ws.FlushLocked();  // the write lands after the launches before it
  ws.api().wgpuQueueWriteBuffer(ws.queue(), buf.buffer, start, data, end - start);
}

uint64_t Queue::NextReadback() {
  std::lock_guard lock(readback_mu_);
  return readbacks_made_;
}

bool Queue::FinishReadbacks(uint64_t up_to, bool wait) {
  Workspace& ws = Workspace::Get();
  uint64_t submitted = 0;  // the batches before this one were submitted
  {
    std::lock_guard submit(ws.submit_mu());
    submitted = ws.batch();
  }
  std::lock_guard lock(readback_mu_);
  while (!readbacks_.empty() && readbacks_.front().number <= up_to) {
    Readback& r = readbacks_.front();
    if (!r.map_asked) {
      if (r.batch >= submitted) return false;
      MapForReading(ws, r.staging, r.size, r.mapped);
      r.map_asked = true;
    }
    if (!wait && !r.mapped->Done()) return false;
    ws.PollUntil([&] { return r.mapped->Done(); });
    Readback done = std::move(r);
    readbacks_.pop_front();
    LandReadback(ws, done.staging, *done.mapped, done.skip, done.host, done.nbytes);
  }
  return true;
}

void Queue::CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes,
                              void*) {
  // wgpu copies the host bytes at once; the queue writes them in order.
  Workspace& ws = Workspace::Get();
  ws.Require(dst->device.device_id);
  WriteBytes(ws, BufferOf(dst), dst->byte_offset + offset, host, nbytes);
}

void Queue::CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes, void*) {
  if (nbytes == 0) return;
  Workspace& ws = Workspace::Get();
  ws.Require(src->device.device_id);
  const Buffer& buf = BufferOf(src);
  const uint64_t at = src->byte_offset + offset;
  CheckRange(buf, at, nbytes, "copy from");
  const uint64_t start = WordStart(at);
  auto mapped = std::make_shared<MapResult>();
  const uint64_t size = WordEnd(at + nbytes) - start;
  // Numbered in submission order (submit_mu, then readback_mu, as an event
  // takes them): an event recorded later finishes it.
  std::lock_guard submit(ws.submit_mu());
  // Behind running work a submission would wait in the driver
  // (webgpu_device.h): the copy joins the batch, and the wait that submits it
  // asks for its mapping (FinishReadbacks).
  const bool now = ws.IdleLocked();  // the copy is submitted, with the batch it ends
  const uint64_t batch = ws.batch();
  WGPUBuffer staging = now ? StageReadbackLocked(ws, buf, start, size, mapped)
                           : RecordReadbackLocked(ws, buf, start, size);
  {
    std::lock_guard lock(readback_mu_);
    readbacks_.push_back(
        Readback{readbacks_made_++, staging, size, at - start, host, nbytes, mapped, batch, now});
  }
  if (!now) ws.RecordedLocked();  // which may submit the batch, once the work before is done
}

void Queue::CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst,
                               size_t dst_offset, size_t nbytes, void*) {
  if (nbytes == 0) return;
  Workspace& ws = Workspace::Get();
  ws.Require(dst->device.device_id);
  const Buffer& from = BufferOf(src);
  const Buffer& to = BufferOf(dst);
  const uint64_t from_at = src->byte_offset + src_offset;
  const uint64_t to_at = dst->byte_offset + dst_offset;
  CheckRange(from, from_at, nbytes, "copy from");
  CheckRange(to, to_at, nbytes, "copy into");
  // WebGPU copies whole words between two buffers; anything else goes
  // through host memory.
  if (from.buffer == to.buffer || (from_at | to_at | nbytes) % 4 != 0) {
    std::vector<uint8_t> staged(nbytes);
    ReadBytes(ws, from, from_at, staged.data(), nbytes);
    WriteBytes(ws, to, to_at, staged.data(), nbytes);
    return;
  }
  std::lock_guard lock(ws.submit_mu());
  ws.api().wgpuCommandEncoderCopyBufferToBuffer(ws.PendingLocked(), from.buffer, from_at, to.buffer,
                                                to_at, nbytes);
  ws.RecordedLocked();
}

}  // namespace webgpu
}  // namespace modrt
