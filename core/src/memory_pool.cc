// The caching, stream-ordered memory pool of each device, and the
// device.memory_* registry functions.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "internal.h"
#include "modrt/core/device.h"
#include "stream.h"

namespace modrt {

namespace {

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
    bool cached = false;
    {
      std::lock_guard lock(mu_);
      cached = !free_.empty();
    }
    // A backend may free a block only once the device stopped using it, and
    // wait in its driver for that, where nothing ends the wait (Vulkan
    // drains the device): the wait happens here instead, where Ctrl-C and
    // MODRT_WAIT_TIMEOUT end it, before any block leaves the cache.
    if (cached && device.device_type != kDLCPU) WaitForStreams(device);
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
      api->GetAttr(device.device_id, kModrtDeviceAttrTotalMemory, &r);
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

  static uint64_t IntAttr(DeviceAPI* api, int id, ModrtDeviceAttr attr) {
    OwnedValue v;
    {
      Ret ret(v.out());
      api->GetAttr(id, attr, &ret);
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
        limits_.total = IntAttr(api, device.device_id, kModrtDeviceAttrTotalMemory);
        limits_.max_alloc = IntAttr(api, device.device_id, kModrtDeviceAttrMaxAllocSize);
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

}  // namespace

void* PoolAlloc(DeviceAPI* api, DLDevice device, size_t nbytes) {
  return PoolOf(device).Alloc(api, device, nbytes);
}

void PoolFree(DLDevice device, void* ptr, size_t nbytes) noexcept {
  PoolOf(device).Free(device, ptr, nbytes);
}

std::string MemorySummary(DLDevice device) {
  return PoolOf(device).Summary(GetExistingDeviceAPI(device), device);
}

namespace {

MODRT_STATIC_INIT([] {
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
});

}  // namespace
}  // namespace modrt
