// Pinned host memory (Python: modrt.pinned_empty): page-locked host memory
// from the backend's ModrtPinnedHostExtension, which that backend's copies on
// a native stream read and write in place (no staging copy in the core), or
// plain host memory, said so, where the backend has none. On the cpu device,
// whose memory is host memory, it is plain aligned memory used directly.
//
// Every live pinned block is in an address map, so a copy given a host
// pointer finds the block holding it (PinnedBlockFor) and keeps it alive until
// the copy completed: freeing the array early cannot free memory a copy
// still uses.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "internal.h"
#include "stream.h"

namespace modrt {
namespace {

constexpr int32_t kModrtObjPinned = 19;
// Page-aligned, like the drivers' own page-locked allocations.
constexpr size_t kPinnedAlignment = 4096;

struct PinnedBlock {
  PinnedBlock(DLDevice device, const DeviceLayerTables* host, void* ptr, size_t nbytes)
      : device(device), host(host), ptr(ptr), nbytes(nbytes) {}
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  ~PinnedBlock();
  const DLDevice device;
  // The backend's tables, with pinned_host; null: plain host memory (std::free).
  const DeviceLayerTables* const host;
  void* const ptr;
  const size_t nbytes;
};

struct PinnedRegistry {
  std::mutex mu;
  std::map<uintptr_t, std::weak_ptr<PinnedBlock>> blocks;  // by first byte
};

PinnedRegistry& Registry() {
  // Leaked: blocks may be freed during process teardown.
  static PinnedRegistry* r = std::make_unique<PinnedRegistry>().release();
  return *r;
}

PinnedBlock::~PinnedBlock() {
  if (host == nullptr) {
    std::free(ptr);
    return;
  }
  {
    PinnedRegistry& r = Registry();
    std::lock_guard lock(r.mu);
    r.blocks.erase(reinterpret_cast<uintptr_t>(ptr));
  }
  // In a forked child the driver's memory is the parent's: left alone.
  if (!InForkedChild()) host->pinned_host->host_free(host->self, device.device_id, ptr);
}

class PinnedObj final : public Object {
 public:
  PinnedObj(std::shared_ptr<PinnedBlock> block, bool in_place, std::string description)
      : block_(std::move(block)), in_place_(in_place), description_(std::move(description)) {}
  int32_t type_index() const final { return kModrtObjPinned; }
  const PinnedBlock& block() const { return *block_; }
  // The device reads and writes it directly (page-locked, or the cpu device).
  bool in_place() const { return in_place_; }
  const std::string& description() const { return description_; }

 private:
  std::shared_ptr<PinnedBlock> block_;
  const bool in_place_;
  const std::string description_;
};

void* AlignedHostMemory(size_t nbytes) {
  const size_t size =
      (std::max<size_t>(nbytes, 1) + kPinnedAlignment - 1) & ~(kPinnedAlignment - 1);
  void* p = std::aligned_alloc(kPinnedAlignment, size);
  if (p == nullptr) Fail("MemoryError", "out of host memory allocating ", nbytes, " bytes");
  return p;
}

// What pinned memory is on `device`'s backend ("" when it has none).
std::string PinnedKind(DLDevice device, const DeviceLayerTables** host) {
  DeviceAPI* api = GetExistingDeviceAPI(device);
  const DeviceLayerTables& layer = api->layer();
  *host = device.device_type == kDLCPU || layer.pinned_host == nullptr ? nullptr : &layer;
  if (device.device_type == kDLCPU) {
    return "aligned host memory (the cpu device reads and writes host memory in place)";
  }
  if (*host == nullptr) return "";
  const char* d = (*host)->pinned_host->description;
  return d != nullptr && *d != '\0' ? d : "page-locked host memory";
}

Ref<Object> AllocPinned(DLDevice device, int64_t nbytes) {
  if (nbytes < 0) Fail("ValueError", "cannot allocate ", nbytes, " bytes");
  const auto n = static_cast<size_t>(nbytes);
  const DeviceLayerTables* host = nullptr;
  std::string kind = PinnedKind(device, &host);
  if (host == nullptr) {
    const bool in_place = device.device_type == kDLCPU;
    if (!in_place) {
      kind = StrCat("plain (pageable) host memory: ", DeviceName(device),
                    "'s backend has no pinned host memory, so copies with stream= stage it");
    }
    auto block = std::make_shared<PinnedBlock>(device, nullptr, AlignedHostMemory(n), n);
    return MakeObject<PinnedObj>(std::move(block), in_place, std::move(kind));
  }
  void* ptr = nullptr;
  CheckNative(
      host->pinned_host->host_alloc(host->self, device.device_id, std::max<size_t>(n, 1), &ptr));
  auto block = std::make_shared<PinnedBlock>(device, host, ptr, n);
  {
    PinnedRegistry& r = Registry();
    std::lock_guard lock(r.mu);
    r.blocks[reinterpret_cast<uintptr_t>(ptr)] = block;
  }
  return MakeObject<PinnedObj>(std::move(block), true, std::move(kind));
}

PinnedObj* PinnedArg(const Args& a, int32_t i) {
  return static_cast<PinnedObj*>(a.Obj(i, kModrtObjPinned, "pinned host memory"));
}

}  // namespace

std::shared_ptr<void> PinnedBlockFor(DLDevice device, const void* ptr, size_t nbytes) {
  const auto at = reinterpret_cast<uintptr_t>(ptr);
  PinnedRegistry& r = Registry();
  std::lock_guard lock(r.mu);
  auto it = r.blocks.upper_bound(at);
  if (it == r.blocks.begin()) return nullptr;
  --it;
  std::shared_ptr<PinnedBlock> block = it->second.lock();
  if (!block || !SameDevice(block->device, device)) return nullptr;
  const uintptr_t first = reinterpret_cast<uintptr_t>(block->ptr);
  if (at < first || nbytes > block->nbytes || at - first > block->nbytes - nbytes) return nullptr;
  return block;
}

namespace {

MODRT_STATIC_INIT([] {
  // pinned.alloc(device, nbytes): host memory for copies with `device`
  // (pinned where its backend has pinned memory; pinned.in_place says).
  RegisterGlobal("pinned.alloc", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "pinned.alloc");
    r->SetObject(AllocPinned(a.Device(0), a.Int(1)));
  });
  RegisterGlobal("pinned.address", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "pinned.address");
    r->SetInt(static_cast<int64_t>(reinterpret_cast<uintptr_t>(PinnedArg(a, 0)->block().ptr)));
  });
  RegisterGlobal("pinned.nbytes", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "pinned.nbytes");
    r->SetInt(static_cast<int64_t>(PinnedArg(a, 0)->block().nbytes));
  });
  RegisterGlobal("pinned.in_place", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "pinned.in_place");
    r->SetInt(PinnedArg(a, 0)->in_place() ? 1 : 0);
  });
  RegisterGlobal("pinned.description", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "pinned.description");
    r->SetStr(PinnedArg(a, 0)->description());
  });
  // pinned.covers(device, address, nbytes): 1 when those bytes are pinned
  // memory that `device`'s copies use in place.
  RegisterGlobal("pinned.covers", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "pinned.covers");
    const int64_t n = a.Int(2);
    r->SetInt(n >= 0 && PinnedBlockFor(a.Device(0), a.Ptr(1), static_cast<size_t>(n)) ? 1 : 0);
  });
  // device.pinned_memory(device): what pinned memory is there ("" when none).
  RegisterGlobal("device.pinned_memory", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.pinned_memory");
    const DeviceLayerTables* host = nullptr;
    r->SetStr(PinnedKind(a.Device(0), &host));
  });
});

}  // namespace
}  // namespace modrt
