// Copies ordered on a native stream: host to device and back (asynchronous,
// host memory held until the copy completed; pinned memory used in place,
// stream_pinned.cc), and device to device.
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "internal.h"
#include "stream.h"

namespace modrt {
namespace {

TensorObj* TensorAt(const Args& a, int32_t i) {
  return static_cast<TensorObj*>(a.Obj(i, kModrtObjTensor, "tensor"));
}

// A native stream on the tensor's device, for an async copy.
StreamState& CopyStream(const Args& a, int32_t i, TensorObj* t, const char* what) {
  StreamState& s = StreamArg(a, i)->state();
  if (!SameDevice(s.device(), t->dl()->device)) {
    Fail("ValueError", what, ": a tensor on ", DeviceName(t->dl()->device),
         " cannot be copied on a stream of ", DeviceName(s.device()));
  }
  if (s.native() == nullptr) {
    Fail("ValueError", what, ": ", DeviceName(s.device()), " has no native streams");
  }
  if (s.capture() != nullptr) Fail("RuntimeError", what, ": the stream is capturing a graph");
  return s;
}

// Byte `offset` of `nbytes` within tensor `t`; ValueError when outside it.
void CheckRange(TensorObj* t, int64_t offset, int64_t nbytes, const char* what) {
  const int64_t size = static_cast<int64_t>(t->nbytes());
  if (nbytes < 0 || offset < 0 || offset > size || nbytes > size - offset) {
    Fail("ValueError", what, ": bytes [", offset, ", ", offset + nbytes,
         ") are outside the tensor's ", size, " bytes");
  }
}

LaunchRecord CopyRecord(const char* what, size_t nbytes) {
  LaunchRecord r;
  r.kernel = StrCat(what, " of ", nbytes, " bytes");
  r.is_launch = false;
  return r;
}

MODRT_STATIC_INIT([] {
  // tensor.copy_from_host_async(tensor, stream, src, nbytes, offset): from
  // pinned memory of the device (modrt.pinned_empty) the copy reads `src` in
  // place when the stream reaches it, the memory held until then; other
  // bytes are staged in the core until the copy completed, so the caller's
  // memory is free at once.
  RegisterGlobal("tensor.copy_from_host_async", [](const Args& a, Ret*) {
    a.ExpectCount(5, "tensor.copy_from_host_async");
    const char* what = "tensor.copy_from_host_async";
    TensorObj* t = TensorAt(a, 0);
    if (t->read_only()) Fail("ValueError", "cannot copy into a read-only tensor");
    StreamState& s = CopyStream(a, 1, t, what);
    CheckRange(t, a.Int(4), a.Int(3), what);
    const size_t n = static_cast<size_t>(a.Int(3));
    const void* src = a.Ptr(2);
    std::shared_ptr<void> hold = PinnedBlockFor(s.device(), src, n);
    if (hold == nullptr) {
      auto staging = std::make_shared<std::vector<char>>(n);
      if (n != 0) std::memcpy(staging->data(), src, n);
      src = staging->data();
      hold = std::move(staging);
    }
    s.Throttle(0);
    s.native()->CopyFromHost(src, t->dl(), static_cast<size_t>(a.Int(4)), n);
    s.NoteLaunch(CopyRecord("copy to the device", n), 0, std::move(hold));
  });
  // tensor.copy_to_host_async(tensor, stream, host, nbytes, offset): into
  // `host`, a host (cpu) tensor or an address in pinned memory of the device
  // (modrt.pinned_empty), which the stream holds until the copy completed.
  RegisterGlobal("tensor.copy_to_host_async", [](const Args& a, Ret*) {
    a.ExpectCount(5, "tensor.copy_to_host_async");
    const char* what = "tensor.copy_to_host_async";
    TensorObj* t = TensorAt(a, 0);
    StreamState& s = CopyStream(a, 1, t, what);
    CheckRange(t, a.Int(4), a.Int(3), what);
    const size_t n = static_cast<size_t>(a.Int(3));
    void* dst = nullptr;
    std::shared_ptr<void> hold;
    if (a[2].type_code == kModrtObject) {
      TensorObj* host = TensorAt(a, 2);
      if (host->dl()->device.device_type != kDLCPU || host->nbytes() < n) {
        Fail("ValueError", what, ": the destination must be a cpu tensor of at least ", n,
             " bytes");
      }
      dst = static_cast<char*>(host->dl()->data) + host->dl()->byte_offset;
      Ref<Object> held(host);
      hold =
          std::shared_ptr<void>(held.release(), [](void* p) { static_cast<Object*>(p)->DecRef(); });
    } else {
      dst = a.Ptr(2);
      hold = PinnedBlockFor(s.device(), dst, n);
      if (hold == nullptr) {
        Fail("ValueError", what, ": the destination address is not pinned memory of ",
             DeviceName(s.device()), " (modrt.pinned_empty); copy into a cpu tensor instead");
      }
    }
    s.Throttle(0);
    s.native()->CopyToHost(t->dl(), static_cast<size_t>(a.Int(4)), dst, n);
    s.NoteLaunch(CopyRecord("copy to the host", n), 0, std::move(hold));
  });
  // tensor.copy_device_async(dst, src, stream): both on the stream's device.
  RegisterGlobal("tensor.copy_device_async", [](const Args& a, Ret*) {
    a.ExpectCount(3, "tensor.copy_device_async");
    const char* what = "tensor.copy_device_async";
    TensorObj* dst = TensorAt(a, 0);
    TensorObj* src = TensorAt(a, 1);
    if (dst->read_only()) Fail("ValueError", "cannot copy into a read-only tensor");
    StreamState& s = CopyStream(a, 2, dst, what);
    if (!SameDevice(src->dl()->device, dst->dl()->device)) {
      Fail("ValueError", what, ": both tensors must be on ", DeviceName(s.device()));
    }
    if (dst->nbytes() != src->nbytes()) {
      Fail("ValueError", "copy of a tensor of ", src->nbytes(), " bytes into one of ",
           dst->nbytes());
    }
    if (SameBytes(dst, src)) return;  // a tensor copied onto itself
    const size_t n = dst->nbytes();
    s.Throttle(n);
    s.native()->CopyDeviceToDevice(src->dl(), dst->dl(), n);
    s.NoteLaunch(CopyRecord("device-to-device copy", n), n);
  });
});

}  // namespace
}  // namespace modrt
