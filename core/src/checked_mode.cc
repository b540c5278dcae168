// Checked mode (MODRT_CHECK=bounds, or modrt.checked() in Python): finds
// kernels that write past their buffers before the damage spreads. Tensors
// allocated in it have guard zones filled with a pattern; functions fetched in
// it compare, after each call, the guards of their tensor arguments, and raise
// IndexError naming the kernel, the argument and the byte offsets written,
// then restore the pattern. A write that lands beyond the guard zone is not
// caught (kGuardBytes bounds what checked mode absorbs).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "internal.h"
#include "modrt/core/device.h"
#include "modrt/core/function.h"
#include "stream.h"

namespace modrt {
namespace {

constexpr unsigned char kPattern = 0xDB;

std::atomic<int> bounds_checking{-1};  // -1: not read from the environment yet
thread_local bool calling_checked = false;

DLTensor GuardView(TensorObj* t, size_t offset, size_t bytes) {
  DLTensor view = *t->dl();
  view.byte_offset = offset;
  view.ndim = 1;
  view.dtype = DLDataType{kDLUInt, 8, 1};
  view.strides = nullptr;
  static thread_local int64_t shape;
  shape = static_cast<int64_t>(bytes);
  view.shape = &shape;
  return view;
}

// Waits until the launches queued on the tensor's device have run (the
// stream workers run them after the call returns), as device.sync does.
void WaitForLaunches(const DLDevice& device) {
  for (const auto& s : StreamsOf(device)) {
    while (!s->Wait(s->submitted(), 3600.0, -1.0)) {
    }
  }
}

// The guard zones' contents: on cpu [head | tail], elsewhere the tail.
std::vector<unsigned char> ReadGuards(TensorObj* t) {
  const size_t guard = t->guard_bytes();
  WaitForLaunches(t->dl()->device);
  if (t->dl()->device.device_type == kDLCPU) {
    std::vector<unsigned char> bytes(2 * guard);
    const char* data = static_cast<const char*>(t->dl()->data);
    std::memcpy(bytes.data(), data - guard, guard);
    std::memcpy(bytes.data() + guard, data + t->nbytes(), guard);
    return bytes;
  }
  std::vector<unsigned char> bytes(guard);
  DeviceAPI* api = t->device_api();
  api->Sync(t->dl()->device.device_id);
  const DLTensor view = GuardView(t, t->nbytes(), guard);
  api->CopyToHost(&view, bytes.data(), guard);
  return bytes;
}

void CheckGuards(const std::string& kernel, size_t index, TensorObj* t) {
  const std::vector<unsigned char> bytes = ReadGuards(t);
  const size_t guard = t->guard_bytes();
  const bool cpu = t->dl()->device.device_type == kDLCPU;
  int64_t first = 0, last = 0;
  bool hit = false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == kPattern) continue;
    // Offsets from the start of the tensor's data: negative before it.
    const int64_t offset = cpu && i < guard
                               ? static_cast<int64_t>(i) - static_cast<int64_t>(guard)
                               : static_cast<int64_t>(t->nbytes() + i - (cpu ? guard : 0));
    if (!hit) first = offset;
    last = offset;
    hit = true;
  }
  if (!hit) return;
  FillGuards(t);  // checked again at the next launch
  Fail("IndexError", kernel, ": argument ", index, " was written out of bounds: bytes ", first,
       " to ", last, " of a buffer of ", t->nbytes(),
       " bytes (found by checked mode, MODRT_CHECK=bounds; the kernel's launch or sizes "
       "disagree with this buffer)");
}

}  // namespace

bool BoundsChecking() {
  int on = bounds_checking.load(std::memory_order_relaxed);
  if (on < 0) {
    const char* env = std::getenv("MODRT_CHECK");
    on = env != nullptr && std::string(env) == "bounds" ? 1 : 0;
    int expected = -1;
    bounds_checking.compare_exchange_strong(expected, on);
    on = bounds_checking.load();
  }
  return on == 1;
}

void FillGuards(TensorObj* t) {
  const size_t guard = t->guard_bytes();
  if (t->dl()->device.device_type == kDLCPU) {
    char* data = static_cast<char*>(t->dl()->data);
    std::memset(data - guard, kPattern, guard);
    std::memset(data + t->nbytes(), kPattern, guard);
    return;
  }
  const std::vector<unsigned char> pattern(guard, kPattern);
  DLTensor view = GuardView(t, t->nbytes(), guard);
  t->device_api()->CopyFromHost(pattern.data(), &view, guard);
}

bool CallingChecked() { return calling_checked; }

void CheckGuardsOf(const std::string& kernel, const ModrtValue* args, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const ModrtValue& v = args[i];
    if (v.type_code != kModrtObject || v.v_obj == nullptr ||
        static_cast<Object*>(v.v_obj)->type_index() != kModrtObjTensor) {
      continue;
    }
    auto* t = static_cast<TensorObj*>(v.v_obj);
    if (t->guard_bytes() != 0) CheckGuards(kernel, static_cast<size_t>(i), t);
  }
}

Ref<FunctionObj> CheckingBounds(Ref<FunctionObj> f, const std::string& name) {
  return MakeObject<FunctionObj>(
      RawBody([f, name](const ModrtValue* args, int32_t n, ModrtValue* ret) {
        {
          struct Restore {
            bool was;
            ~Restore() { calling_checked = was; }
          } restore{std::exchange(calling_checked, true)};
          f->Call(args, n, ret);
        }
        CheckGuardsOf(name, args, n);
      }));
}

MODRT_STATIC_INIT([] {
  RegisterGlobal("check.bounds", [](const Args& a, Ret* r) {
    // check.bounds() -> whether on; check.bounds(on) sets it, returns the previous state.
    const bool was = BoundsChecking();
    if (a.size() == 1) bounds_checking.store(a.Int(0) != 0 ? 1 : 0);
    r->SetInt(was ? 1 : 0);
  });
});

}  // namespace modrt
