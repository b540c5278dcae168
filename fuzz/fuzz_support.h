// What every modrt fuzz target shares: the rule that bad input is answered
// with a modrt::Error (the C ABI turns it into an exception), never with a
// crash or with any other exception escaping.
#ifndef MODRT_FUZZ_FUZZ_SUPPORT_H_
#define MODRT_FUZZ_FUZZ_SUPPORT_H_

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "modrt/core/object.h"

namespace modrt {
namespace fuzz {

// Stops the run with a finding: libFuzzer saves the input that led here.
[[noreturn]] inline void Finding(const std::string& what) {
  std::fprintf(stderr, "modrt fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void Check(bool ok, const std::string& what) {
  if (!ok) Finding(what);
}

// Runs `body`; a modrt::Error is the expected answer to bad bytes, anything
// else thrown (bad_alloc, length_error, out_of_range, ...) is a finding.
template <typename Body>
bool Rejects(Body&& body) {
  try {
    body();
    return false;
  } catch (const Error&) {
    return true;
  } catch (const std::exception& e) {
    Finding(std::string("a non-modrt exception escaped: ") + e.what());
  }
}

}  // namespace fuzz
}  // namespace modrt

#endif  // MODRT_FUZZ_FUZZ_SUPPORT_H_
