// The ELF check run before every dlopen (core/src/elf_check.cc): any bytes
// get an answer, never a crash, and the file path (pread on a memfd) answers
// exactly as the in-memory path does.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "elf_check.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using modrt::fuzz::Check;
  const std::string_view image(reinterpret_cast<const char*>(data), size);
  const std::string problem = modrt::ElfImageProblem(image);
  Check(problem == modrt::ElfImageProblem(image), "the answer changed on a second look");
  if (size == 0) return 0;  // the file path answers "empty file" for those
  int fd = memfd_create("modrt-elf-check-fuzz", MFD_CLOEXEC);
  Check(fd >= 0, "memfd_create failed");
  Check(write(fd, data, size) == static_cast<ssize_t>(size), "write to the memfd failed");
  const std::string from_file = modrt::ElfFileProblem("/proc/self/fd/" + std::to_string(fd));
  close(fd);
  Check(from_file == problem, "file and image disagree: '" + from_file + "' vs '" + problem + "'");
  return 0;
}
