// Core-internal declarations shared between the core's own sources.
#ifndef MODRT_CORE_SRC_INTERNAL_H_
#define MODRT_CORE_SRC_INTERNAL_H_

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "modrt/abi/c_api.h"
#include "modrt/abi/plugin_api.h"
#include "modrt/core/device.h"
#include "modrt/core/function.h"
#include "modrt/core/payload.h"

namespace modrt {

// This thread's last error, typed (plugin ABI 1.1's set_error,
// get_error_code, get_error_message; c_api.cc).
void SetTypedError(int32_t code, const char* message);
int32_t LastErrorCode();
const char* LastErrorMessage();

// A call into a C table (a plugin's, or the core's cpu device) failed:
// throws the error it reported.
inline void CheckTableCall(int status) {
  if (status != 0) ThrowLastError();
}

// Copies a plugin's table into a zeroed one of this core's layout: fields
// past the plugin's struct_size (an older minor) stay null, fields past ours
// (a newer minor) are not read.
template <typename Table>
Table CopyTable(const Table* given, size_t min_size, const char* what) {
  if (given == nullptr) Fail("ValueError", "null ", what);
  if (given->struct_size < min_size) {
    Fail("ValueError", what, " is ", given->struct_size, " bytes, smaller than plugin ABI ",
         MODRT_PLUGIN_ABI_MAJOR, ".0's ", min_size);
  }
  Table table{};
  std::memcpy(&table, given, std::min(given->struct_size, sizeof(Table)));
  table.struct_size = sizeof(Table);
  return table;
}

// The function table every plugin is given (plugin.cc).
const ModrtCoreApi& CoreApi();
// The table a plugin is given: CoreApi(), or a copy that counts each call
// (MODRT_COUNT_CORE_CALLS=1, core_call_count.cc).
const ModrtCoreApi& PluginCoreApi();

// A device's memory pool (memory_pool.cc): stream-ordered reuse of freed blocks.
void* PoolAlloc(DeviceAPI* api, DLDevice device, size_t nbytes);
void PoolFree(DLDevice device, void* ptr, size_t nbytes) noexcept;

// Waits until the device's streams are complete, so host memory sees their
// results (StreamState::WaitUntilComplete: Ctrl-C and MODRT_WAIT_TIMEOUT end it).
void WaitForStreams(DLDevice device);

// A copy from `src` to `dst` of the same size (tensor.cc): true when they are
// the same bytes of one buffer (the copy has nothing to do); ValueError when
// their bytes overlap otherwise (no backend copies overlapping ranges).
bool SameBytes(TensorObj* dst, TensorObj* src);

// A part of a call that may block (ModrtSetWaitHooks): the caller's own lock
// (Python's GIL) is let go from construction to destruction. Made and
// destroyed with no core lock held: retaking the caller's lock while holding
// one could deadlock against a thread that holds the caller's lock and waits
// for that core lock.
class WaitRegion {
 public:
  WaitRegion();
  ~WaitRegion();
  WaitRegion(const WaitRegion&) = delete;
  WaitRegion& operator=(const WaitRegion&) = delete;

 private:
  ModrtWaitLeaveFunc leave_ = nullptr;
  void* token_ = nullptr;
};

// Between the slices of a wait with no bound of its own: true when the
// caller asked to stop (ModrtSetInterruptCheck: Ctrl-C); the wait then ends
// with Fail("KeyboardInterrupt", ...) naming what it waited for. Call it with
// no core lock held and outside a WaitRegion.
bool InterruptRequested();
// MODRT_WAIT_TIMEOUT in seconds, or -1 when it is not set (no bound).
double DefaultWaitTimeout();

void RegisterGlobalObject(const std::string& name, Ref<FunctionObj> func, bool allow_override);
// Loads a plugin DSO; it reads `options` (its load-time configuration) while it registers.
void LoadPlugin(const std::string& path, const std::map<std::string, std::string>& options);

// While alive, the core's load_option answers from `options` on this thread:
// LoadPlugin holds one around a plugin's register_plugin.
class RegisteringOptionsScope {
 public:
  explicit RegisteringOptionsScope(const std::map<std::string, std::string>* options);
  ~RegisteringOptionsScope();
  RegisteringOptionsScope(const RegisteringOptionsScope&) = delete;
  RegisteringOptionsScope& operator=(const RegisteringOptionsScope&) = delete;
};

// A multi-shader payload has exactly one shader per function: refuses one
// whose fmap and smap disagree, naming the function or shader.
void CheckShaderMap(const PayloadObj& payload, const std::string& display_name);

// "k: argument 0 ('params') is a uniform block of 16 bytes" (kernel_args.cc),
// the start of every refusal of a uniform block's value.
std::string UniformBlockLabel(const std::string& kernel, size_t index, const ArgInfo& a);

// Checks the value `args[passed]` a launch of `info` would take in the place
// of the caller's value at that index (a scalar argument or a launch
// parameter) as the launch checks it (kernel_args.cc): the same TypeError or
// OverflowError, naming the argument. Graph replays with new scalars check
// them before anything runs.
void CheckScalarValue(const FunctionInfo& info, const Args& args, int32_t passed);

// fork() (fork_guard.cc): a device opened before a fork is refused in the
// child. NoteDeviceOpened records a use of `device` (RuntimeError in such a
// child); ForkedDeviceProblem says why `device` is unusable here ("" if it is
// usable); InForkedChild: whether this process is such a child.
void NoteDeviceOpened(DLDevice device);
std::string ForkedDeviceProblem(DLDevice device);
// Why a module's functions cannot be fetched here ("" if they can).
std::string ForkedModuleProblem();
bool InForkedChild();

// Checked mode (checked_mode.cc): MODRT_CHECK=bounds or modrt.checked().
// Tensors allocated in it carry kGuardBytes of guard zone after their data
// (and before it on cpu, where data is a plain pointer), filled with a pattern;
// functions fetched in it check the guards of their tensor arguments after
// each call.
constexpr size_t kGuardBytes = 4096;
bool BoundsChecking();
// Extra bytes a guarded allocation of `guard` takes on `device`.
inline size_t GuardedExtra(DLDevice device, size_t guard) {
  return device.device_type == kDLCPU ? 2 * guard : guard;
}
class TensorObj;
void FillGuards(TensorObj* t);
// Wraps `f` (function `name`) so that each call checks its tensor arguments' guards.
Ref<FunctionObj> CheckingBounds(Ref<FunctionObj> f, const std::string& name);
// True inside a call through CheckingBounds on this thread: a graph that
// records the launch checks it again at each replay.
bool CallingChecked();
// IndexError naming `kernel` when a guarded tensor among `args` was written
// out of bounds (its guards are refilled first).
void CheckGuardsOf(const std::string& kernel, const ModrtValue* args, int32_t n);

// Lowercase hex of `bytes` (SHA-256 digests, key ids, keys).
std::string Hex(std::string_view bytes);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_INTERNAL_H_
