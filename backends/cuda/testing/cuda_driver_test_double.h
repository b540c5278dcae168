// The shared state of the CUDA driver TEST DOUBLE (cuda_driver_test_double.cc
// describes it): its objects, its log and its injected failures. Split from
// the entry points so that each file stays one concern: modules and launches
// (cuda_driver_test_double.cc), streams, events, copies and graphs
// (cuda_driver_test_double_streams.cc). Test-only code, never in a runtime.
#ifndef MODRT_BACKENDS_CUDA_TESTING_CUDA_DRIVER_TEST_DOUBLE_H_
#define MODRT_BACKENDS_CUDA_TESTING_CUDA_DRIVER_TEST_DOUBLE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#define EXPORT __attribute__((visibility("default")))

namespace cuda_double {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kInvalidDevice = 101;
constexpr int kInvalidImage = 200;
constexpr int kInvalidHandle = 400;
constexpr int kNotFound = 500;
constexpr int kNotReady = 600;
constexpr int kIllegalAddress = 700;
constexpr int kCaptureUnsupported = 900;
constexpr int kCaptureInvalidated = 901;
constexpr int kGraphExecUpdateFailure = 910;
constexpr int kDefaultSharedLimit = 48 * 1024;

struct Kernel {
  std::string name;
  bool sizes_known = false;  // PTX declares them; a cubin is not parsed
  std::vector<size_t> param_sizes;
  int max_dynamic_shared = kDefaultSharedLimit;
};

struct Module {
  std::string format;  // "ptx" or "elf"
  std::string image;   // PTX text, or the ELF bytes up to the end of its section table
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
};

struct Launch {
  std::string kernel;
  std::string params;  // the parameters' bytes, hex, comma-separated ("" when unknown)
};

struct Graph {
  int id = 0;
  std::vector<Launch> launches;
};

struct Stream {
  int id = 0;
  std::unique_ptr<Graph> capture;  // while capturing
};

struct Event {
  int id = 0;
  bool timing = true;
  bool recorded = false;
  double time_ms = 0;
};

extern std::mutex mu;
extern std::string log_text;  // guarded by mu
// The next calls of an entry point that fail: (code, how many); guarded by mu.
extern std::map<std::string, std::pair<int, int>> failing;
extern double clock_ms;  // the fake device clock; guarded by mu
extern int next_id;      // of streams, events and graphs; guarded by mu
// Page-locked host allocations (cuMemHostAlloc): first byte -> size; guarded by mu.
extern std::map<const char*, size_t> pinned;

// The code a test asked `call` to fail with next, or success. Under mu.
int InjectedLocked(const std::string& call);
// A stream's number for the log ("null" for the legacy default stream).
std::string StreamId(const void* stream);
std::string Hex(const void* data, size_t n);
std::string Quote(const std::string& s);
// Whether [p, p + n) lies in one page-locked allocation. Under mu.
bool PinnedLocked(const void* p, size_t n);

}  // namespace cuda_double

#endif  // MODRT_BACKENDS_CUDA_TESTING_CUDA_DRIVER_TEST_DOUBLE_H_
