// What the driver test doubles share (driver_test_double.h).
#include "tests/driver_doubles/driver_test_double.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace driver_double {

std::mutex mu;
std::string log_text;  // guarded by mu
// The next calls of an entry point that fail: (code, how many); guarded by mu.
std::map<std::string, std::pair<int, int>> failing;
double clock_ms = 0;
int next_id = 1;
std::map<const char*, size_t> pinned;

// The code a test asked `call` to fail with next, or success. Under mu.
int InjectedLocked(const std::string& call) {
  auto it = failing.find(call);
  if (it == failing.end()) return kSuccess;
  const int code = it->second.first;
  if (--it->second.second == 0) failing.erase(it);
  log_text += "{\"call\": \"" + call + "\", \"failed\": " + std::to_string(code) + "}\n";
  return code;
}

std::string StreamId(const void* stream) {
  return stream ? std::to_string(static_cast<const Stream*>(stream)->id) : "null";
}

std::string Hex(const void* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    unsigned char b = static_cast<const unsigned char*>(data)[i];
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::string Quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

bool PinnedLocked(const void* p, size_t n) {
  const auto* at = static_cast<const char*>(p);
  auto it = pinned.upper_bound(at);
  if (it == pinned.begin()) return false;
  --it;
  return at >= it->first && at + n <= it->first + it->second;
}

const char* LogCopy() {
  std::lock_guard lock(mu);
  static std::string copy;
  copy = log_text;
  return copy.c_str();
}

void Reset() {
  std::lock_guard lock(mu);
  log_text.clear();
  failing.clear();
}

void FailNext(const char* call, int code, int times) {
  std::lock_guard lock(mu);
  failing[call] = {code, times};
}

int StreamCreate(const char* call, void** stream, unsigned flags) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  auto s = std::make_unique<Stream>();
  s->id = next_id++;
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + std::to_string(s->id) +
              ", \"flags\": " + std::to_string(flags) + "}\n";
  *stream = s.release();
  return kSuccess;
}

int StreamDestroy(const char* call, void* stream) {
  if (stream == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) + "}\n";
  delete static_cast<Stream*>(stream);
  return kSuccess;
}

int StreamSynchronize(const char* call, void* stream) {
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) + "}\n";
  return InjectedLocked(call);
}

int StreamWaitEvent(const char* call, void* stream, void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) +
              ", \"event\": " + std::to_string(static_cast<Event*>(event)->id) + "}\n";
  return kSuccess;
}

int EventCreate(const char* call, void** event, unsigned, bool timing) {
  std::lock_guard lock(mu);
  auto e = std::make_unique<Event>();
  e->id = next_id++;
  e->timing = timing;
  log_text += std::string("{\"call\": \"") + call + "\", \"event\": " + std::to_string(e->id) +
              ", \"timing\": " + (e->timing ? "true" : "false") + "}\n";
  *event = e.release();
  return kSuccess;
}

int EventRecord(const char* call, void* event, void* stream) {
  auto* e = static_cast<Event*>(event);
  if (e == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  e->recorded = true;
  e->time_ms = clock_ms;
  log_text += std::string("{\"call\": \"") + call + "\", \"event\": " + std::to_string(e->id) +
              ", \"stream\": " + StreamId(stream) + "}\n";
  return kSuccess;
}

int EventQuery(const char* call, void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  return InjectedLocked(call);
}

int EventSynchronize(const char* call, void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call +
              "\", \"event\": " + std::to_string(static_cast<Event*>(event)->id) + "}\n";
  return InjectedLocked(call);
}

int EventElapsedTime(const char* call, float* ms, void* start, void* end) {
  auto* a = static_cast<Event*>(start);
  auto* b = static_cast<Event*>(end);
  if (a == nullptr || b == nullptr || !a->timing || !b->timing) return kInvalidHandle;
  if (!a->recorded || !b->recorded) return kInvalidHandle;
  std::lock_guard lock(mu);
  *ms = static_cast<float>(b->time_ms - a->time_ms);
  log_text += std::string("{\"call\": \"") + call + "\", \"start\": " + std::to_string(a->id) +
              ", \"end\": " + std::to_string(b->id) + "}\n";
  return kSuccess;
}

int EventDestroy(const char* call, void* event) {
  if (event == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call +
              "\", \"event\": " + std::to_string(static_cast<Event*>(event)->id) + "}\n";
  delete static_cast<Event*>(event);
  return kSuccess;
}

int AsyncCopy(const char* call, void* dst, const void* src, size_t bytes, void* stream,
              const void* host) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  std::memcpy(dst, src, bytes);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) +
              ", \"bytes\": " + std::to_string(bytes) + ", \"pinned\": " +
              (host == nullptr             ? "null"
               : PinnedLocked(host, bytes) ? "true"
                                           : "false") +
              "}\n";
  return kSuccess;
}

int HostAlloc(const char* call, void** ptr, size_t bytes, unsigned flags) {
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  auto* p = static_cast<char*>(std::malloc(bytes == 0 ? 1 : bytes));
  if (p == nullptr) return kOutOfMemory;
  pinned[p] = bytes;
  log_text += std::string("{\"call\": \"") + call + "\", \"bytes\": " + std::to_string(bytes) +
              ", \"flags\": " + std::to_string(flags) + "}\n";
  *ptr = p;
  return kSuccess;
}

int HostFree(const char* call, void* ptr) {
  std::lock_guard lock(mu);
  auto it = pinned.find(static_cast<const char*>(ptr));
  if (it == pinned.end()) return kInvalidValue;
  log_text +=
      std::string("{\"call\": \"") + call + "\", \"bytes\": " + std::to_string(it->second) + "}\n";
  pinned.erase(it);
  std::free(ptr);
  return kSuccess;
}

bool NoteLaunchLocked(void* stream, const std::string& kernel, const std::string& params) {
  auto* s = static_cast<Stream*>(stream);
  if (s != nullptr && s->capture != nullptr) {
    s->capture->launches.push_back(Launch{kernel, params});
    return true;
  }
  clock_ms += 1.0;
  return false;
}

// --- graphs by stream capture ---

int BeginCapture(const char* call, void* stream, int mode) {
  auto* s = static_cast<Stream*>(stream);
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) +
              ", \"mode\": " + std::to_string(mode) + "}\n";
  if (s == nullptr) return kCaptureUnsupported;  // the NULL stream cannot be captured
  if (s->capture != nullptr) return kInvalidValue;
  s->capture = std::make_unique<Graph>();
  s->capture->id = next_id++;
  return kSuccess;
}

int EndCapture(const char* call, void* stream, void** graph) {
  auto* s = static_cast<Stream*>(stream);
  std::lock_guard lock(mu);
  if (s == nullptr || s->capture == nullptr) return kInvalidValue;
  std::unique_ptr<Graph> g = std::move(s->capture);
  log_text += std::string("{\"call\": \"") + call + "\", \"stream\": " + StreamId(stream) +
              ", \"graph\": " + std::to_string(g->id) +
              ", \"launches\": " + std::to_string(g->launches.size()) + "}\n";
  if (int code = InjectedLocked(call)) return code;
  *graph = g.release();
  return kSuccess;
}

int GraphInstantiate(const char* call, void** exec, void* graph) {
  auto* g = static_cast<Graph*>(graph);
  if (g == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  auto e = std::make_unique<Graph>(*g);
  e->id = next_id++;
  log_text += std::string("{\"call\": \"") + call + "\", \"graph\": " + std::to_string(g->id) +
              ", \"exec\": " + std::to_string(e->id) + "}\n";
  *exec = e.release();
  return kSuccess;
}

int GraphLaunch(const char* call, void* exec, void* stream) {
  auto* e = static_cast<Graph*>(exec);
  if (e == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  clock_ms += static_cast<double>(e->launches.size());
  std::string kernels, params;
  for (const Launch& l : e->launches) {
    kernels += (kernels.empty() ? "" : ", ") + Quote(l.kernel);
    params += (params.empty() ? "" : ", ") + Quote(l.params);
  }
  log_text += std::string("{\"call\": \"") + call + "\", \"exec\": " + std::to_string(e->id) +
              ", \"stream\": " + StreamId(stream) + ", \"kernels\": [" + kernels +
              "], \"params\": [" + params + "]}\n";
  return kSuccess;
}

int GraphExecDestroy(const char* call, void* exec) {
  if (exec == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call +
              "\", \"exec\": " + std::to_string(static_cast<Graph*>(exec)->id) + "}\n";
  delete static_cast<Graph*>(exec);
  return kSuccess;
}

int GraphDestroy(const char* call, void* graph) {
  if (graph == nullptr) return kInvalidHandle;
  std::lock_guard lock(mu);
  log_text += std::string("{\"call\": \"") + call +
              "\", \"graph\": " + std::to_string(static_cast<Graph*>(graph)->id) + "}\n";
  delete static_cast<Graph*>(graph);
  return kSuccess;
}

int GraphExecUpdate(const char* call, void* exec, void* graph) {
  auto* e = static_cast<Graph*>(exec);
  auto* g = static_cast<Graph*>(graph);
  if (e == nullptr || g == nullptr) return kInvalidValue;
  std::lock_guard lock(mu);
  if (int code = InjectedLocked(call)) return code;
  bool same = e->launches.size() == g->launches.size();
  for (size_t i = 0; same && i < e->launches.size(); ++i) {
    same = e->launches[i].kernel == g->launches[i].kernel;
  }
  log_text += std::string("{\"call\": \"") + call + "\", \"exec\": " + std::to_string(e->id) +
              ", \"graph\": " + std::to_string(g->id) +
              ", \"updated\": " + (same ? "true" : "false") + "}\n";
  if (!same) return kGraphExecUpdateFailure;
  e->launches = g->launches;
  return kSuccess;
}

}  // namespace driver_double
