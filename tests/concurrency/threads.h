// Runs a body on N threads released together, so first calls really race.
#ifndef MODRT_TESTS_CONCURRENCY_THREADS_H_
#define MODRT_TESTS_CONCURRENCY_THREADS_H_

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace modrt {
namespace testing {

constexpr int kThreads = 16;

// Each body gets its thread index; an exception in any thread fails the test.
inline void RunTogether(int n, const std::function<void(int)>& body) {
  std::mutex mu;
  std::condition_variable go;
  bool released = false;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      {
        std::unique_lock lock(mu);
        go.wait(lock, [&] { return released; });
      }
      try {
        body(i);
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        errors.push_back("thread " + std::to_string(i) + ": " + e.what());
      }
    });
  }
  {
    std::lock_guard lock(mu);
    released = true;
  }
  go.notify_all();
  for (auto& t : threads) t.join();
  for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
  if (!errors.empty()) std::exit(1);
}

[[noreturn]] inline void FailTest(const std::string& what) {
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  std::exit(1);
}

inline void Expect(bool ok, const std::string& what) {
  if (!ok) FailTest(what);
}

}  // namespace testing
}  // namespace modrt

#endif  // MODRT_TESTS_CONCURRENCY_THREADS_H_
