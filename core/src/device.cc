// Device API registry, the CPU device, tensors, and their registry functions.
#include "modrt/core/device.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "internal.h"
#include "modrt/core/backend.h"
#include "modrt/core/payload.h"
#include "stream.h"

namespace modrt {

namespace {

// A device kind is the core's cpu, or the name of the backend registered
// first with its DLPack device type.
int DeviceTypeOfKind(std::string_view kind) {
  if (kind == "cpu") return kDLCPU;
  const BackendInfo* b = FindBackend(std::string(kind));
  if (b == nullptr || FindBackendOfDeviceType(b->device_type) != b) return -1;
  return b->device_type;
}

}  // namespace

const char* DeviceKindName(DLDeviceType type) {
  if (type == kDLCPU) return "cpu";
  const BackendInfo* b = FindBackendOfDeviceType(type);
  return b == nullptr ? nullptr : b->name.c_str();  // registry entries live for the process
}

namespace {

constexpr int kMaxDeviceType = 64;
// Registered APIs never go away, so lookups are cached without a lock.
std::array<std::atomic<DeviceAPI*>, kMaxDeviceType> api_cache{};

DeviceAPI* LookupDeviceAPI(DLDeviceType type) {
  if (type < 0 || type >= kMaxDeviceType) return nullptr;
  if (DeviceAPI* api = api_cache[type].load(std::memory_order_acquire)) return api;
  const char* kind = DeviceKindName(type);
  if (kind == nullptr) return nullptr;
  Ref<FunctionObj> f = GetGlobal(std::string("device_api.") + kind);
  if (!f) return nullptr;
  OwnedValue ret;
  f->Call(nullptr, 0, ret.out());
  if (ret.value().type_code != kModrtOpaquePtr) return nullptr;
  auto* api = static_cast<DeviceAPI*>(ret.value().v_ptr);
  api_cache[type].store(api, std::memory_order_release);
  return api;
}

std::string MissingApiReason(DLDeviceType type) {
  const char* kind = DeviceKindName(type);
  if (kind == nullptr) return StrCat("unknown device type ", int(type));
  const BackendInfo* b = FindBackend(kind);
  if (b == nullptr) return StrCat("no device API is registered for device kind '", kind, "'");
  return StrCat(b->display_name, " runtime ", b->RuntimeLibrary(),
                " is not loaded (build with --//backends:", b->name, "=on)");
}

class CpuDeviceAPI final : public DeviceAPI {
 public:
  int DeviceCount() override { return 1; }
  std::string UnavailableReason() override { return ""; }
  void GetAttr(int, std::string_view name, Ret* ret) override {
    if (name == "name") ret->SetStr("cpu");
    if (name == "global_memory") {
      ret->SetInt(static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE));
    }
  }
  void* Alloc(int id, size_t nbytes) override {
    constexpr size_t kAlign = 64;
    void* p =
        std::aligned_alloc(kAlign, (std::max<size_t>(nbytes, 1) + kAlign - 1) / kAlign * kAlign);
    if (p == nullptr) {
      Fail("MemoryError", "cpu(", id, "): cannot allocate ", nbytes, " bytes of host memory");
    }
    return p;
  }
  void Free(int, void* ptr) override { std::free(ptr); }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    std::memcpy(static_cast<char*>(t->data) + t->byte_offset, src, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    std::memcpy(dst, static_cast<const char*>(t->data) + t->byte_offset, nbytes);
  }
  void Sync(int) override {}
};

// A caching, stream-ordered pool of one device's memory: a freed block is
// kept and handed out again for an allocation of the same size once the
// launches that may still use it are complete (stream.h, DeviceCompleted).
// Blocks are reused only at their exact size, so a kernel never sees a
// buffer larger than its tensor.
class DevicePool {
 public:
  void* Alloc(DeviceAPI* api, DLDevice device, size_t nbytes) {
    {
      std::lock_guard lock(mu_);
      const uint64_t completed =
          device.device_type == kDLCPU ? UINT64_MAX : DeviceCompleted(device);
      auto [first, last] = free_.equal_range(nbytes);
      for (auto it = first; it != last; ++it) {
        if (it->second.ready_after <= completed) {
          void* ptr = it->second.ptr;
          free_.erase(it);
          pool_bytes_ -= nbytes;
          Count(nbytes);
          return ptr;
        }
      }
    }
    CheckBudget(api, device, nbytes);
    void* ptr = nullptr;
    try {
      ptr = api->Alloc(device.device_id, nbytes);
    } catch (const Error& e) {
      if (e.kind() != "MemoryError") throw;
      // Give the cached blocks back to the driver, then try once more.
      EmptyCache(api, device);
      try {
        ptr = api->Alloc(device.device_id, nbytes);
      } catch (const Error& again) {
        if (again.kind() != "MemoryError") throw;
        Fail("MemoryError", again.what(), " [", Summary(api, device), "]");
      }
    }
    std::lock_guard lock(mu_);
    ++driver_allocs_;
    Count(nbytes);
    return ptr;
  }

  // Never throws: runs from tensor destructors.
  void Free(DLDevice device, void* ptr, size_t nbytes) noexcept {
    const uint64_t ready_after = device.device_type == kDLCPU ? 0 : DeviceLaunched(device);
    std::lock_guard lock(mu_);
    in_use_ -= nbytes;
    --live_;
    free_.emplace(nbytes, Block{ptr, ready_after});
    pool_bytes_ += nbytes;
  }

  // Hands every cached block back to the driver (its free defers what the
  // device still uses).
  void EmptyCache(DeviceAPI* api, DLDevice device) {
    std::multimap<size_t, Block> blocks;
    {
      std::lock_guard lock(mu_);
      blocks.swap(free_);
      pool_bytes_ = 0;
    }
    for (auto& [size, block] : blocks) api->Free(device.device_id, block.ptr);
  }

  struct Stats {
    size_t in_use, peak, live, driver_allocs, pool_bytes, largest_free;
  };
  Stats Get() {
    std::lock_guard lock(mu_);
    return Stats{in_use_,        peak_,       live_,
                 driver_allocs_, pool_bytes_, free_.empty() ? 0 : free_.rbegin()->first};
  }

  std::string Summary(DeviceAPI* api, DLDevice device) {
    Stats s = Get();
    std::string text =
        StrCat(DeviceKindName(device.device_type), "(", device.device_id, ") memory: ", s.in_use,
               " bytes in use by ", s.live, " tensors, peak ", s.peak, ", pool ", s.pool_bytes,
               " bytes cached (largest block ", s.largest_free, ")");
    OwnedValue total;
    {
      Ret r(total.out());
      api->GetAttr(device.device_id, "global_memory", &r);
    }
    if (total.value().type_code == kModrtInt) {
      text += StrCat(", device total ", total.value().v_int64, " bytes");
    }
    return text;
  }

 private:
  // The most the device may hold: its reported "global_memory" (and
  // "max_alloc_size" for one allocation), lowered by MODRT_DEVICE_MEMORY_LIMIT.
  // Checked before the driver is asked: drivers that allocate lazily (PoCL,
  // lavapipe, wgpu) otherwise fail later with a signal, far from the cause.
  struct Limits {
    bool known = false;
    uint64_t total = 0;      // 0: not reported
    uint64_t max_alloc = 0;  // 0: not reported
    const char* total_source = "global_memory";
  };

  static uint64_t IntAttr(DeviceAPI* api, int id, std::string_view name) {
    OwnedValue v;
    {
      Ret ret(v.out());
      api->GetAttr(id, name, &ret);
    }
    return v.value().type_code == kModrtInt && v.value().v_int64 > 0
               ? static_cast<uint64_t>(v.value().v_int64)
               : 0;
  }

  // MemoryError unless `nbytes` more fit the device (the cache is emptied first if that makes
  // room).
  void CheckBudget(DeviceAPI* api, DLDevice device, size_t nbytes) {
    Limits limits;
    {
      std::lock_guard lock(mu_);
      if (!limits_.known) {
        limits_.known = true;
        limits_.total = IntAttr(api, device.device_id, "global_memory");
        limits_.max_alloc = IntAttr(api, device.device_id, "max_alloc_size");
        if (const char* limit = std::getenv("MODRT_DEVICE_MEMORY_LIMIT")) {
          const uint64_t v = std::strtoull(limit, nullptr, 10);
          if (v > 0 && (limits_.total == 0 || v < limits_.total)) {
            limits_.total = v;
            limits_.total_source = "MODRT_DEVICE_MEMORY_LIMIT";
          }
        }
      }
      limits = limits_;
    }
    const std::string where = StrCat(DeviceKindName(device.device_type), "(", device.device_id,
                                     "): cannot allocate ", nbytes, " bytes: ");
    if (limits.max_alloc != 0 && nbytes > limits.max_alloc) {
      Fail("MemoryError", where, "one allocation may hold at most ", limits.max_alloc,
           " bytes on this device (max_alloc_size)");
    }
    if (limits.total == 0) return;
    auto fits = [&] {
      std::lock_guard lock(mu_);
      const uint64_t held = in_use_ + pool_bytes_;
      return nbytes <= limits.total - std::min<uint64_t>(held, limits.total);
    };
    if (fits()) return;
    EmptyCache(api, device);
    if (fits()) return;
    const Stats s = Get();
    Fail("MemoryError", where, s.in_use, " bytes are in use (", s.live, " tensor",
         s.live == 1 ? "" : "s", ") of the device's ", limits.total, " (", limits.total_source,
         "); free tensors and allocate again [", Summary(api, device), "]");
  }

  struct Block {
    void* ptr;
    uint64_t ready_after;  // DeviceLaunched() when it was freed
  };
  void Count(size_t nbytes) {
    in_use_ += nbytes;
    peak_ = std::max(peak_, in_use_);
    ++live_;
  }

  std::mutex mu_;
  Limits limits_;
  std::multimap<size_t, Block> free_;
  size_t in_use_ = 0, peak_ = 0, live_ = 0, driver_allocs_ = 0, pool_bytes_ = 0;
};

DevicePool& PoolOf(DLDevice device) {
  static std::mutex mu;
  // Leaked: tensors may die during process teardown.
  static auto* pools = std::make_unique<std::map<std::pair<int, int>, DevicePool>>().release();
  std::lock_guard lock(mu);
  return (*pools)[{device.device_type, device.device_id}];
}

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

std::string MemorySummary(DLDevice device) {
  return PoolOf(device).Summary(GetExistingDeviceAPI(device), device);
}

void RegisterDeviceAPI(const std::string& kind, DeviceAPI* api) {
  RegisterGlobal("device_api." + kind, [api](const Args&, Ret* r) { r->SetPtr(api); });
}

DeviceAPI* GetDeviceAPI(DLDeviceType type) {
  if (DeviceAPI* api = LookupDeviceAPI(type)) return api;
  Fail("ValueError", MissingApiReason(type));
}

DeviceAPI* GetExistingDeviceAPI(DLDevice device) {
  NoteDeviceOpened(device);
  DeviceAPI* api = GetDeviceAPI(device.device_type);
  int count = api->DeviceCount();
  if (device.device_id < 0 || device.device_id >= count) {
    std::string why = count == 0 ? api->UnavailableReason()
                                 : StrCat("device index ", device.device_id, " out of range (",
                                          count, " device", count == 1 ? "" : "s", ")");
    Fail("ValueError", DeviceKindName(device.device_type), "(", device.device_id,
         ") does not exist: ", why);
  }
  return api;
}

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
    PoolOf(dl_.device)
        .Free(dl_.device, static_cast<char*>(dl_.data) - (head ? guard_ : 0),
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
  t->dl_.data = PoolOf(device).Alloc(api, device, nbytes + extra);
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

TensorObj* TensorArg(const Args& a, int32_t i) {
  return static_cast<TensorObj*>(a.Obj(i, kModrtObjTensor, "tensor"));
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

// Waits (without a bound: callers from Python waited with one first) until
// the device's streams are complete, so host memory sees their results.
void WaitForStreams(DLDevice device) {
  for (const auto& s : StreamsOf(device)) {
    while (!s->Wait(s->submitted(), 3600.0, -1.0)) {
    }
  }
}

MODRT_STATIC_INIT([] {
  static CpuDeviceAPI cpu;
  RegisterDeviceAPI("cpu", &cpu);

  // The DLPack device type of a kind name, or -1 when no backend defines it.
  RegisterGlobal("device.type_of_kind", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.type_of_kind");
    r->SetInt(DeviceTypeOfKind(a.Str(0)));
  });
  RegisterGlobal("device.kind_name", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.kind_name");
    const char* kind = DeviceKindName(static_cast<DLDeviceType>(a.Int(0)));
    if (kind == nullptr) Fail("ValueError", "unknown device type ", a.Int(0));
    r->SetStr(kind);
  });
  RegisterGlobal("device.count", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.count");
    DeviceAPI* api = LookupDeviceAPI(static_cast<DLDeviceType>(a.Int(0)));
    r->SetInt(api ? api->DeviceCount() : 0);
  });
  // Empty when the device exists, else why it does not.
  RegisterGlobal("device.unavailable_reason", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.unavailable_reason");
    DLDevice dev = a.Device(0);
    DeviceAPI* api = LookupDeviceAPI(dev.device_type);
    if (api == nullptr) return r->SetStr(MissingApiReason(dev.device_type));
    if (std::string forked = ForkedDeviceProblem(dev); !forked.empty()) return r->SetStr(forked);
    int count = api->DeviceCount();
    if (count == 0) return r->SetStr(api->UnavailableReason());
    if (dev.device_id < 0 || dev.device_id >= count) {
      return r->SetStr(StrCat("device index ", dev.device_id, " out of range (", count, " device",
                              count == 1 ? "" : "s", ")"));
    }
    r->SetStr("");
  });
  RegisterGlobal("device.attr", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "device.attr");
    DLDevice dev = a.Device(0);
    GetExistingDeviceAPI(dev)->GetAttr(dev.device_id, a.Str(1), r);
  });
  // After the device's streams are complete (modrt.Device.sync waits for them
  // with a bound first): the backend's own sync.
  RegisterGlobal("device.sync", [](const Args& a, Ret*) {
    a.ExpectCount(1, "device.sync");
    DLDevice dev = a.Device(0);
    DeviceAPI* api = GetExistingDeviceAPI(dev);
    WaitForStreams(dev);
    WaitRegion waiting;
    api->Sync(dev.device_id);
  });
  RegisterGlobal("device.memory_stats", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.memory_stats");
    DLDevice dev = a.Device(0);
    GetExistingDeviceAPI(dev);
    DevicePool::Stats s = PoolOf(dev).Get();
    r->SetStr(StrCat("in_use=", s.in_use, "\npeak=", s.peak, "\nallocations=", s.live,
                     "\ndriver_allocations=", s.driver_allocs, "\npool_bytes=", s.pool_bytes,
                     "\nlargest_free_block=", s.largest_free, "\n"));
  });
  RegisterGlobal("device.memory_summary", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.memory_summary");
    r->SetStr(MemorySummary(a.Device(0)));
  });
  RegisterGlobal("device.empty_cache", [](const Args& a, Ret*) {
    a.ExpectCount(1, "device.empty_cache");
    DLDevice dev = a.Device(0);
    PoolOf(dev).EmptyCache(GetExistingDeviceAPI(dev), dev);
  });
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
    std::optional<WaitRegion> copying;
    if (n >= kLargeCopyBytes) copying.emplace();
    if (view.device.device_type == kDLCPU) {
      WaitForStreams(view.device);
    } else if (n != t->nbytes()) {
      const size_t offset = view.byte_offset - t->dl()->byte_offset;
      if (api->CopyRange(a.Ptr(1), t->dl(), offset, n)) return;
      // Without the ranged-copy extension a part is staged through host
      // memory (read the tensor, patch the range, write it back).
      std::vector<char> staging(t->nbytes());
      api->CopyToHost(t->dl(), staging.data(), staging.size());
      std::memcpy(staging.data() + (view.byte_offset - t->dl()->byte_offset), a.Ptr(1), n);
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
    std::optional<WaitRegion> copying;
    if (n >= kLargeCopyBytes) copying.emplace();
    if (view.device.device_type == kDLCPU) {
      WaitForStreams(view.device);
    } else if (n != t->nbytes()) {
      if (api->CopyRange(t->dl(), view.byte_offset - t->dl()->byte_offset, a.Ptr(1), n)) return;
      // staged, as above
      std::vector<char> staging(t->nbytes());
      api->CopyToHost(t->dl(), staging.data(), staging.size());
      std::memcpy(a.Ptr(1), staging.data() + (view.byte_offset - t->dl()->byte_offset), n);
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
    const size_t n = dst->nbytes();
    std::optional<WaitRegion> copying;
    if (n >= kLargeCopyBytes) copying.emplace();
    DLDevice dd = dst->dl()->device, sd = src->dl()->device;
    DeviceAPI* dapi = GetExistingDeviceAPI(dd);
    DeviceAPI* sapi = GetExistingDeviceAPI(sd);
    if (dd.device_type == kDLCPU) WaitForStreams(dd);
    if (sd.device_type == kDLCPU) WaitForStreams(sd);
    const char* sdata = static_cast<const char*>(src->dl()->data) + src->dl()->byte_offset;
    char* ddata = static_cast<char*>(dst->dl()->data) + dst->dl()->byte_offset;
    if (sd.device_type == kDLCPU) return dapi->CopyFromHost(sdata, dst->dl(), n);
    if (dd.device_type == kDLCPU) return sapi->CopyToHost(src->dl(), ddata, n);
    std::vector<char> staging(n);
    sapi->CopyToHost(src->dl(), staging.data(), n);
    dapi->CopyFromHost(staging.data(), dst->dl(), n);
  });
  RegisterGlobal("dtype.normalize", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "dtype.normalize");
    r->SetStr(DTypeToString(ParseDType(a.Str(0))));
  });
});

}  // namespace
}  // namespace modrt
