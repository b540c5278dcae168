// Device state does not survive fork(): a driver's threads, locks and mapped
// memory are the parent's, and so are the core's stream worker threads (cpu
// launches run on them too). A child of a process that used a device (cpu
// included) gets a RuntimeError on every use of it, never a hang, and does not
// touch the parent's objects when it releases them (they leak, in the child
// only); the parent is unaffected.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "internal.h"
#include "modrt/core/device.h"

namespace modrt {
namespace {

// Device types (bit = DLDeviceType) opened in this process, the pid that
// opened them, and, in a child, the parent's pid.
std::atomic<uint64_t> opened_types{0};
std::atomic<pid_t> opened_by{0};
std::atomic<pid_t> forked_from{0};

void InChild() {
  if (opened_types.load() != 0) forked_from.store(opened_by.load());
}

void InstallHandler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, InChild); });
}

uint64_t Bit(DLDeviceType type) {
  const int t = static_cast<int>(type);
  return t >= 0 && t < 64 ? uint64_t{1} << t : 0;
}

}  // namespace

bool InForkedChild() { return forked_from.load() != 0; }

std::string ForkedDeviceProblem(DLDevice device) {
  if (forked_from.load() == 0) return "";
  if ((opened_types.load() & Bit(device.device_type)) == 0) return "";
  const char* kind = DeviceKindName(device.device_type);
  return StrCat(kind ? kind : "device", "(", device.device_id,
                ") cannot be used in this process: it was opened by process ", forked_from.load(),
                " before this process was forked from it, and a driver's state does not survive "
                "fork(). Start workers with multiprocessing's 'spawn' or 'forkserver' method, or "
                "use the device only in processes that open it themselves");
}

std::string ForkedModuleProblem() {
  if (forked_from.load() == 0) return "";
  return StrCat("modules cannot be used in this process: it was opened by process ",
                forked_from.load(),
                " before this process was forked from it (with its devices), and their state "
                "does not survive fork(). Start workers with multiprocessing's 'spawn' or "
                "'forkserver' method");
}

void NoteDeviceOpened(DLDevice device) {
  if (const std::string problem = ForkedDeviceProblem(device); !problem.empty()) {
    Fail("RuntimeError", problem);
  }
  InstallHandler();
  if (forked_from.load() == 0) opened_by.store(getpid());
  opened_types.fetch_or(Bit(device.device_type));
}

}  // namespace modrt
