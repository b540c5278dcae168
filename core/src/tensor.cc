// Tensors: memory from a device's pool or adopted from a DLPack producer,
// and the tensor.* registry functions (allocation, host and device copies).
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "internal.h"
#include "modrt/core/device.h"
#include "modrt/core/payload.h"
#include "stream.h"

namespace modrt {

namespace {

// Bytes of a tensor of `shape` and `dtype`; MemoryError where size_t cannot hold them.
size_t CheckedBytes(const std::vector<int64_t>& shape, DLDataType dtype) {
  unsigned __int128 n = (dtype.bits * static_cast<unsigned>(dtype.lanes) + 7) / 8;
  for (int64_t d : shape) {
    n *= static_cast<uint64_t>(d);
    if (n > std::numeric_limits<size_t>::max()) {
      std::string dims;
      for (int64_t e : shape) dims += StrCat(dims.empty() ? "" : ", ", e);
      Fail("MemoryError", "a tensor of shape (", dims, ") of ", DTypeToString(dtype),
           " needs more bytes than this machine can address");
    }
  }
  return static_cast<size_t>(n);
}

}  // namespace

size_t TensorBytes(const DLTensor& t) { return common::TensorBytes(t); }

bool IsContiguous(const DLTensor& t) { return common::IsContiguous(t); }

size_t TensorObj::nbytes() const { return TensorBytes(dl_); }

TensorObj::~TensorObj() {
  if (release_) {
    release_();
  } else if (api_ != nullptr && !ForkedDeviceProblem(dl_.device).empty()) {
    // The parent's device memory: not this process's to free (it leaks, here only).
  } else if (api_ != nullptr) {
    const bool head = guard_ != 0 && dl_.device.device_type == kDLCPU;
    PoolFree(dl_.device, static_cast<char*>(dl_.data) - (head ? guard_ : 0),
             nbytes() + GuardedExtra(dl_.device, guard_));
  }
}

Ref<TensorObj> TensorObj::Empty(std::vector<int64_t> shape, DLDataType dtype, DLDevice device) {
  for (int64_t d : shape) {
    if (d < 0) Fail("ValueError", "negative dimension ", d, " in tensor shape");
  }
  DeviceAPI* api = GetExistingDeviceAPI(device);
  const size_t nbytes = CheckedBytes(shape, dtype);
  // Checked mode: guard zones around the data, filled with a pattern that
  // CheckGuards compares after each launch (checked_mode.cc).
  const size_t guard = BoundsChecking() ? kGuardBytes : 0;
  const size_t extra = GuardedExtra(device, guard);
  auto t = MakeObject<TensorObj>();
  t->shape_ = std::move(shape);
  t->dl_.device = device;
  t->dl_.dtype = dtype;
  t->dl_.ndim = static_cast<int32_t>(t->shape_.size());
  t->dl_.shape = t->shape_.data();
  t->dl_.data = PoolAlloc(api, device, nbytes + extra);
  t->api_ = api;
  if (guard != 0) {
    // On cpu the data starts after the head guard; a device buffer is an
    // opaque handle, so it has a tail guard only.
    if (device.device_type == kDLCPU) t->dl_.data = static_cast<char*>(t->dl_.data) + guard;
    t->guard_ = guard;
    FillGuards(t.get());
  }
  return t;
}

namespace {

std::string Dims(const int64_t* v, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) s += StrCat(i ? ", " : "", v[i]);
  return s + "]";
}

bool IsHostMemory(DLDeviceType type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost || type == kDLCUDAManaged;
}

// Copies a strided host tensor element by element into compact row-major `dst`.
void CopyStridedToCompact(const DLTensor& src, char* dst) {
  const size_t elem = (src.dtype.bits * src.dtype.lanes + 7) / 8;
  const char* base = static_cast<const char*>(src.data) + src.byte_offset;
  size_t total = 1;
  for (int32_t i = 0; i < src.ndim; ++i) total *= static_cast<size_t>(src.shape[i]);
  std::vector<int64_t> index(src.ndim, 0);
  for (size_t k = 0; k < total; ++k) {
    int64_t offset = 0;
    for (int32_t i = 0; i < src.ndim; ++i) offset += index[i] * src.strides[i];
    std::memcpy(dst + k * elem, base + offset * static_cast<int64_t>(elem), elem);
    for (int32_t i = src.ndim - 1; i >= 0; --i) {
      if (++index[i] < src.shape[i]) break;
      index[i] = 0;
    }
  }
}

}  // namespace

Ref<TensorObj> TensorObj::Adopt(const DLTensor& src, std::function<void()> release, bool read_only,
                                bool copy) {
  auto t = MakeObject<TensorObj>();
  t->release_ = std::move(release);  // from here on the tensor owns it, on every path
  t->read_only_ = read_only;
  if (src.ndim < 0) Fail("ValueError", "DLPack tensor with negative ndim");
  if (src.ndim > 0 && src.shape == nullptr) Fail("ValueError", "DLPack tensor without a shape");
  if (!IsContiguous(src)) {
    if (!copy || !IsHostMemory(src.device.device_type)) {
      Fail("ValueError", "DLPack tensor is not compact row-major (shape ",
           Dims(src.shape, src.ndim), ", strides ", Dims(src.strides, src.ndim),
           " in elements); modrt shares only compact memory. ",
           "Make it compact first (numpy: np.ascontiguousarray(x), PyTorch: x.contiguous(), ",
           "CuPy: cupy.ascontiguousarray(x))",
           IsHostMemory(src.device.device_type)
               ? ", or pass copy=True to modrt.from_dlpack to copy it"
               : "");
    }
    std::vector<int64_t> shape(src.shape, src.shape + src.ndim);
    Ref<TensorObj> compact = Empty(std::move(shape), src.dtype, DLDevice{kDLCPU, 0});
    CopyStridedToCompact(src, static_cast<char*>(compact->dl_.data));
    return compact;  // `t` releases the producer's tensor now
  }
  t->dl_ = src;
  t->shape_.assign(src.shape, src.shape + src.ndim);
  t->dl_.shape = t->shape_.data();
  t->dl_.strides = nullptr;
  return t;
}

Ref<TensorObj> TensorObj::View(const Ref<TensorObj>& base, DLDataType dtype) {
  const DLDataType from = base->dl_.dtype;
  const unsigned from_bits = from.bits * static_cast<unsigned>(from.lanes);
  const unsigned to_bits = dtype.bits * static_cast<unsigned>(dtype.lanes);
  if (from_bits % 8 != 0 || to_bits % 8 != 0) {
    Fail("ValueError", "cannot view ", DTypeToString(from), " as ", DTypeToString(dtype),
         ": a view needs element types of whole bytes");
  }
  std::vector<int64_t> shape = base->shape_;
  if (to_bits != from_bits) {
    if (shape.empty()) {
      Fail("ValueError", "cannot view a 0-d tensor of ", DTypeToString(from), " (", from_bits / 8,
           " bytes) as ", DTypeToString(dtype), " (", to_bits / 8,
           " bytes): only a type of the same size keeps its shape");
    }
    const uint64_t last_bytes = static_cast<uint64_t>(shape.back()) * (from_bits / 8);
    if (last_bytes % (to_bits / 8) != 0) {
      Fail("ValueError", "cannot view ", DTypeToString(from),
           Dims(shape.data(), static_cast<int32_t>(shape.size())), " as ", DTypeToString(dtype),
           ": the last dimension's ", last_bytes, " bytes are not a whole number of ", to_bits / 8,
           "-byte elements");
    }
    shape.back() = static_cast<int64_t>(last_bytes / (to_bits / 8));
  }
  auto t = MakeObject<TensorObj>();
  t->dl_ = base->dl_;
  t->dl_.dtype = dtype;
  t->shape_ = std::move(shape);
  t->dl_.shape = t->shape_.data();
  t->release_ = [base] {};  // the base's memory lives as long as the view
  t->read_only_ = base->read_only_;
  t->guard_ = base->guard_;
  return t;
}

Ref<TensorObj> TensorObj::FromDLPack(DLManagedTensor* managed, bool copy) {
  if (managed == nullptr) Fail("ValueError", "null DLManagedTensor");
  auto release = [managed] {
    if (managed->deleter) managed->deleter(managed);
  };
  return Adopt(managed->dl_tensor, release, /*read_only=*/false, copy);
}

Ref<TensorObj> TensorObj::FromDLPackVersioned(DLManagedTensorVersioned* managed, bool copy) {
  if (managed == nullptr) Fail("ValueError", "null DLManagedTensorVersioned");
  auto release = [managed] {
    if (managed->deleter) managed->deleter(managed);
  };
  if (managed->version.major != DLPACK_MAJOR_VERSION) {
    release();  // the DLPack rule for a major version the consumer does not know
    Fail("ValueError", "DLPack ", managed->version.major, ".", managed->version.minor,
         " tensor; modrt reads DLPack ", DLPACK_MAJOR_VERSION, ".x");
  }
  const bool read_only = (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return Adopt(managed->dl_tensor, release, read_only, copy);
}

namespace {

// Synchronous copies of at least this many bytes let the caller's lock (the
// GIL) go while they run; shorter ones keep it.
constexpr size_t kLargeCopyBytes = size_t{64} << 10;

// Lets the caller's lock go for the lifetime of a synchronous copy of
// `bytes`, when the copy is large enough to be worth it.
class LargeCopyRegion {
 public:
  explicit LargeCopyRegion(size_t bytes) {
    if (bytes >= kLargeCopyBytes) region_.emplace();
  }

 private:
  std::optional<WaitRegion> region_;
};

TensorObj* TensorArg(const Args& a, int32_t i) {
  return static_cast<TensorObj*>(a.Obj(i, kModrtObjTensor, "tensor"));
}

// The whole of `t` in host memory: how a part of it is copied on a backend
// without the ranged-copy extension.
std::vector<char> ReadWhole(DeviceAPI* api, TensorObj* t) {
  std::vector<char> staging(t->nbytes());
  api->CopyToHost(t->dl(), staging.data(), staging.size());
  return staging;
}

// The part of `t` that a copy of a.Int(2) bytes at byte offset a.Int(3)
// (default 0; without an offset, the copy must be the whole tensor) covers,
// as a DLTensor of bytes.
DLTensor RangeView(TensorObj* t, const Args& a, const char* what) {
  const int64_t nbytes = a.Int(2);
  const bool ranged = a.size() > 3;
  const int64_t offset = ranged ? a.Int(3) : 0;
  const int64_t size = static_cast<int64_t>(t->nbytes());
  if (!ranged && nbytes != size) {
    Fail("ValueError", "copy of ", nbytes, " bytes into a tensor of ", size, " bytes");
  }
  if (nbytes < 0 || offset < 0 || offset > size || nbytes > size - offset) {
    Fail("ValueError", what, ": bytes [", offset, ", ", offset + nbytes,
         ") are outside the tensor's ", size, " bytes");
  }
  DLTensor view = *t->dl();
  view.byte_offset += static_cast<uint64_t>(offset);
  return view;
}

}  // namespace

// Waits (without a bound: callers from Python waited with one first) until
// the device's streams are complete, so host memory sees their results.
void WaitForStreams(DLDevice device) {
  for (const auto& s : StreamsOf(device)) s->WaitUntilComplete(s->submitted());
}

bool SameBytes(TensorObj* dst, TensorObj* src) {
  const DLTensor &d = *dst->dl(), &s = *src->dl();
  if (!SameDevice(d.device, s.device) || dst->nbytes() == 0) return false;
  // Host memory is addressed directly; a device buffer's `data` is the
  // backend's handle, so only ranges of one handle can overlap.
  uintptr_t d0 = d.byte_offset, s0 = s.byte_offset;
  if (d.device.device_type == kDLCPU) {
    d0 += reinterpret_cast<uintptr_t>(d.data);
    s0 += reinterpret_cast<uintptr_t>(s.data);
  } else if (d.data != s.data) {
    return false;
  }
  if (d0 == s0 && dst->nbytes() == src->nbytes()) return true;
  if (d0 < s0 + src->nbytes() && s0 < d0 + dst->nbytes()) {
    const uintptr_t base = std::min(d0, s0);
    Fail("ValueError", "copy between overlapping bytes of one buffer on ", DeviceName(d.device),
         ": source bytes [", s0 - base, ", ", s0 - base + src->nbytes(), "), destination bytes [",
         d0 - base, ", ", d0 - base + dst->nbytes(), "); copy through a separate tensor");
  }
  return false;
}

namespace {

// A synchronous copy runs behind the device's queued work; that work is
// waited for here, where Ctrl-C and MODRT_WAIT_TIMEOUT end the wait, not in
// the driver's blocking copy: on cpu every stream (their workers run the
// launches), elsewhere the default stream, whose queue the copy joins, and
// every stream once the device may be stuck (a driver that drains the
// device for a copy, Vulkan's, would wait for a kernel that never ends).
void WaitBeforeBlockingCopy(DLDevice device) {
  if (device.device_type == kDLCPU || DeviceMayBeStuck(device)) return WaitForStreams(device);
  const std::shared_ptr<StreamState>& s = DefaultStream(device);
  s->WaitUntilComplete(s->submitted());
}

MODRT_STATIC_INIT([] {
  // tensor.empty(device, dtype, dim...)
  RegisterGlobal("tensor.empty", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "tensor.empty", /*at_least=*/true);
    std::vector<int64_t> shape;
    for (int32_t i = 2; i < a.size(); ++i) shape.push_back(a.Int(i));
    r->SetObject(TensorObj::Empty(std::move(shape), ParseDType(a.Str(1)), a.Device(0)));
  });
  RegisterGlobal("tensor.read_only", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "tensor.read_only");
    r->SetInt(TensorArg(a, 0)->read_only() ? 1 : 0);
  });
  // tensor.copy_from_host(tensor, src, nbytes[, offset]): `nbytes` bytes
  // into the tensor at byte `offset` (the whole tensor without one).
  RegisterGlobal("tensor.copy_from_host", [](const Args& a, Ret*) {
    a.ExpectCount(3, "tensor.copy_from_host", /*at_least=*/true);
    TensorObj* t = TensorArg(a, 0);
    if (t->read_only()) {
      Fail("ValueError",
           "cannot copy into a read-only tensor (its DLPack producer exported it read-only)");
    }
    DLTensor view = RangeView(t, a, "tensor.copy_from_host");
    DeviceAPI* api = GetExistingDeviceAPI(view.device);
    const size_t n = static_cast<size_t>(a.Int(2));
    WaitBeforeBlockingCopy(view.device);
    const LargeCopyRegion copying(n);
    if (view.device.device_type != kDLCPU && n != t->nbytes()) {
      const size_t offset = view.byte_offset - t->dl()->byte_offset;
      if (api->CopyRange(a.Ptr(1), t->dl(), offset, n)) return;
      // Read the tensor, patch the range, write it back.
      std::vector<char> staging = ReadWhole(api, t);
      std::memcpy(staging.data() + offset, a.Ptr(1), n);
      return api->CopyFromHost(staging.data(), t->dl(), staging.size());
    }
    api->CopyFromHost(a.Ptr(1), &view, n);
  });
  RegisterGlobal("tensor.copy_to_host", [](const Args& a, Ret*) {
    a.ExpectCount(3, "tensor.copy_to_host", /*at_least=*/true);
    TensorObj* t = TensorArg(a, 0);
    DLTensor view = RangeView(t, a, "tensor.copy_to_host");
    DeviceAPI* api = GetExistingDeviceAPI(view.device);
    const size_t n = static_cast<size_t>(a.Int(2));
    WaitBeforeBlockingCopy(view.device);
    const LargeCopyRegion copying(n);
    if (view.device.device_type != kDLCPU && n != t->nbytes()) {
      const size_t offset = view.byte_offset - t->dl()->byte_offset;
      if (api->CopyRange(t->dl(), offset, a.Ptr(1), n)) return;
      const std::vector<char> staging = ReadWhole(api, t);
      std::memcpy(a.Ptr(1), staging.data() + offset, n);
      return;
    }
    api->CopyToHost(&view, a.Ptr(1), n);
  });
  // tensor.copy(dst, src): same byte size; one device, or across devices and
  // backends, staged through host memory where neither side is the host.
  RegisterGlobal("tensor.copy", [](const Args& a, Ret*) {
    a.ExpectCount(2, "tensor.copy");
    TensorObj* dst = TensorArg(a, 0);
    TensorObj* src = TensorArg(a, 1);
    if (dst->read_only()) Fail("ValueError", "cannot copy into a read-only tensor");
    if (dst->nbytes() != src->nbytes()) {
      Fail("ValueError", "copy of a tensor of ", src->nbytes(), " bytes into one of ",
           dst->nbytes());
    }
    // A tensor copied onto itself (t.copyfrom(t)): nothing to do.
    if (SameBytes(dst, src)) return;
    const size_t n = dst->nbytes();
    DLDevice dd = dst->dl()->device, sd = src->dl()->device;
    DeviceAPI* dapi = GetExistingDeviceAPI(dd);
    DeviceAPI* sapi = GetExistingDeviceAPI(sd);
    WaitBeforeBlockingCopy(dd);
    if (!SameDevice(sd, dd)) WaitBeforeBlockingCopy(sd);
    const LargeCopyRegion copying(n);
    const char* sdata = static_cast<const char*>(src->dl()->data) + src->dl()->byte_offset;
    char* ddata = static_cast<char*>(dst->dl()->data) + dst->dl()->byte_offset;
    if (sd.device_type == kDLCPU) return dapi->CopyFromHost(sdata, dst->dl(), n);
    if (dd.device_type == kDLCPU) return sapi->CopyToHost(src->dl(), ddata, n);
    std::vector<char> staging(n);
    sapi->CopyToHost(src->dl(), staging.data(), n);
    dapi->CopyFromHost(staging.data(), dst->dl(), n);
  });
  // tensor.view(tensor, dtype): the same memory as another element type.
  RegisterGlobal("tensor.view", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "tensor.view");
    r->SetObject(TensorObj::View(Ref<TensorObj>(TensorArg(a, 0)), ParseDType(a.Str(1))));
  });
  RegisterGlobal("dtype.normalize", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "dtype.normalize");
    r->SetStr(DTypeToString(ParseDType(a.Str(0))));
  });
});

}  // namespace
}  // namespace modrt
