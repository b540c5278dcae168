#include "wgpu_native.h"

#include <elf.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace modrt {
namespace webgpu {
namespace {

// The library's names inside the `wgpu` wheel (wgpu/resources/), in the order
// wgpu-py itself prefers them.
const char* const kWheelNames[] = {"libwgpu_native-release.so", "libwgpu_native.so"};

// Where pip --target installs wheels in the toolchain root.
const char* const kWheelRoots[] = {"/opt/modrt/pip"};

bool IsFile(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void AddWheelFiles(const std::string& root, std::vector<std::string>* out) {
  if (root.empty()) return;
  for (const char* name : kWheelNames) {
    std::string path = root + "/wgpu/resources/" + name;
    if (IsFile(path)) out->push_back(path);
  }
}

// Why the file at `path` is not a whole 64-bit ELF shared object, or "".
// dlopen maps the file's segments and faults (SIGBUS) when it touches a page
// past the end of a file cut short, so a truncated copy is refused here. A
// name without a '/' is left to the loader's search.
std::string ElfProblem(const std::string& path) {
  if (path.find('/') == std::string::npos) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";  // dlopen says why
  in.seekg(0, std::ios::end);
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof(eh)) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return path + ": not an ELF file";
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return path + ": not a 64-bit ELF shared object";
  }
  if (eh.e_phoff + static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr) > size) {
    return path + ": its program headers lie past the end of the file (" + std::to_string(size) +
           " bytes): cut short?";
  }
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof(ph)))
      return path + ": cannot read its program headers";
    if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > size) {
      return path + ": a loadable segment ends at byte " +
             std::to_string(ph.p_offset + ph.p_filesz) + ", past the end of the file (" +
             std::to_string(size) + " bytes): cut short?";
    }
  }
  return "";
}

}  // namespace

std::vector<std::string> DriverCandidates(const std::vector<std::string>& python_candidates) {
  if (const char* chosen = std::getenv("MODRT_WEBGPU_DRIVER_LIBRARY");
      chosen != nullptr && *chosen != '\0') {
    return {chosen};
  }
  std::vector<std::string> out = python_candidates;
  for (const char* root : kWheelRoots) AddWheelFiles(root, &out);
  if (const char* path = std::getenv("PYTHONPATH"); path != nullptr) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) AddWheelFiles(dir, &out);
  }
  out.push_back("libwgpu_native.so");
  // Each file once, first place kept.
  std::vector<std::string> unique;
  for (const std::string& c : out) {
    bool seen = false;
    for (const std::string& u : unique) seen |= u == c;
    if (!seen) unique.push_back(c);
  }
  return unique;
}

std::string LoadWgpuNative(const std::vector<std::string>& candidates,
                           std::unique_ptr<plugin::DriverLibrary>* lib, WgpuApi* api,
                           std::string* loaded_path) {
  std::string tried;
  for (const std::string& path : candidates) {
    // A library of its own per candidate: the first one that loads and has
    // every function wins.
    if (std::string problem = ElfProblem(path); !problem.empty()) {
      tried += (tried.empty() ? "" : "; ") + problem;
      continue;
    }
    auto attempt = std::make_unique<plugin::DriverLibrary>();
    if (!attempt->Open({path})) {
      // DriverLibrary says "cannot load the driver library (<dlerror>)"; the
      // dlerror names the file.
      std::string why = attempt->error();
      const std::string prefix = "cannot load the driver library (";
      if (why.rfind(prefix, 0) == 0 && why.back() == ')')
        why = why.substr(prefix.size(), why.size() - prefix.size() - 1);
      tried += (tried.empty() ? "" : "; ") + why;
      continue;
    }
    WgpuApi resolved;
    bool complete = true;
#define MODRT_WGPU_RESOLVE(name) complete = complete && attempt->Resolve(#name, &resolved.name);
    MODRT_WGPU_FUNCTIONS(MODRT_WGPU_RESOLVE)
#undef MODRT_WGPU_RESOLVE
    if (!complete) {
      tried +=
          (tried.empty() ? "" : "; ") + path + ": " + attempt->error() + " (not wgpu-native 29?)";
      continue;
    }
    // Keep the winner; the DriverLibrary is never dlclose'd.
    *lib = std::move(attempt);
    *api = resolved;
    *loaded_path = path;
    return "";
  }
  std::string why = "no usable wgpu-native library (tried: " + tried + ")";
  if (std::getenv("MODRT_WEBGPU_DRIVER_LIBRARY") == nullptr) {
    why += "; install the `wgpu` package (pip install wgpu) or set MODRT_WEBGPU_DRIVER_LIBRARY";
  }
  return why;
}

std::string ToString(WGPUStringView view) {
  if (view.data == nullptr) return "";
  if (view.length == WGPU_STRLEN) return std::string(view.data);
  return std::string(view.data, view.length);
}

}  // namespace webgpu
}  // namespace modrt
