// What the driver TEST DOUBLES (CUDA: cuda_driver_test_double.cc, HIP:
// backends/rocm/testing/hip_driver_test_double.cc) share: their streams,
// events, graphs and page-locked host memory, the log a test reads back (JSON
// lines), and the failures a test injects. Each double exports its API's entry
// points as thin wrappers naming their call in the log. Status codes are
// CUDA's; HIP's are the same numbers for the ones used here. Test-only code,
// never in a runtime.
#ifndef MODRT_TESTS_DRIVER_DOUBLES_DRIVER_TEST_DOUBLE_H_
#define MODRT_TESTS_DRIVER_DOUBLES_DRIVER_TEST_DOUBLE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#define EXPORT __attribute__((visibility("default")))

namespace driver_double {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
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

// The log, the injected failures and the clock, for the doubles' exported
// test hooks (modrt_<api>_test_double_log, _reset, _fail_next).
const char* LogCopy();
void Reset();
void FailNext(const char* call, int code, int times);

// Streams, events, async copies and page-locked memory, each logged under
// `call` (the API's entry point name, "cuStreamCreate", "hipStreamCreate").
// Streams are numbered from 1 as made (null: the default stream); device
// time is a fake clock that each launch advances by 1 ms.
int StreamCreate(const char* call, void** stream, unsigned flags);
int StreamDestroy(const char* call, void* stream);
int StreamSynchronize(const char* call, void* stream);
int StreamWaitEvent(const char* call, void* stream, void* event);
int EventCreate(const char* call, void** event, unsigned flags, bool timing);
int EventRecord(const char* call, void* event, void* stream);
int EventQuery(const char* call, void* event);
int EventSynchronize(const char* call, void* event);
int EventElapsedTime(const char* call, float* ms, void* start, void* end);
int EventDestroy(const char* call, void* event);
// An async copy, done at once; logged with its stream, size, and whether its
// host side (`host`, null for device to device) is page-locked memory.
int AsyncCopy(const char* call, void* dst, const void* src, size_t bytes, void* stream,
              const void* host);
int HostAlloc(const char* call, void** ptr, size_t bytes, unsigned flags);
int HostFree(const char* call, void* ptr);
// A launch: captured into its stream's graph, or advancing the clock; true
// when captured. Under mu.
bool NoteLaunchLocked(void* stream, const std::string& kernel, const std::string& params);

// Graphs by stream capture, each logged under `call` ("cuStreamBeginCapture",
// "hipStreamBeginCapture", ...). A graph and an executable graph are both a
// Graph (its launches); the NULL stream cannot be captured; launching an
// executable graph advances the clock by its launches and logs their kernels
// and parameters; an update takes the captured graph's parameters when both
// have the same kernels in the same order (kGraphExecUpdateFailure otherwise).
int BeginCapture(const char* call, void* stream, int mode);
int EndCapture(const char* call, void* stream, void** graph);
int GraphInstantiate(const char* call, void** exec, void* graph);
int GraphLaunch(const char* call, void* exec, void* stream);
int GraphExecDestroy(const char* call, void* exec);
int GraphDestroy(const char* call, void* graph);
int GraphExecUpdate(const char* call, void* exec, void* graph);

}  // namespace driver_double

#endif  // MODRT_TESTS_DRIVER_DOUBLES_DRIVER_TEST_DOUBLE_H_
