// NVRTC, driven in one place for all of modrt (nvrtc.h says who uses it).
// The few NVRTC types and entry points used are declared here from its
// documented, stable C ABI.
#include "backends/cuda/nvrtc.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

namespace modrt {
namespace cuda_nvrtc {

using nvrtcResult = int;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

// (member, exported symbol, return type, parameters)
#define MODRT_NVRTC_FUNCTIONS(X)                                                            \
  X(nvrtcVersion, "nvrtcVersion", nvrtcResult, (int*, int*))                                \
  X(nvrtcGetErrorString, "nvrtcGetErrorString", const char*, (nvrtcResult))                 \
  X(nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", nvrtcResult, (int*))            \
  X(nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", nvrtcResult, (int*))                  \
  X(nvrtcCreateProgram, "nvrtcCreateProgram", nvrtcResult,                                  \
    (nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*)) \
  X(nvrtcDestroyProgram, "nvrtcDestroyProgram", nvrtcResult, (nvrtcProgram*))               \
  X(nvrtcCompileProgram, "nvrtcCompileProgram", nvrtcResult,                                \
    (nvrtcProgram, int, const char* const*))                                                \
  X(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult, (nvrtcProgram, size_t*)) \
  X(nvrtcGetProgramLog, "nvrtcGetProgramLog", nvrtcResult, (nvrtcProgram, char*))           \
  X(nvrtcGetPTXSize, "nvrtcGetPTXSize", nvrtcResult, (nvrtcProgram, size_t*))               \
  X(nvrtcGetPTX, "nvrtcGetPTX", nvrtcResult, (nvrtcProgram, char*))                         \
  X(nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nvrtcResult, (nvrtcProgram, size_t*))           \
  X(nvrtcGetCUBIN, "nvrtcGetCUBIN", nvrtcResult, (nvrtcProgram, char*))

struct Nvrtc::Api {
#define MODRT_NVRTC_DECLARE(member, symbol, ret, params) ret(*member) params = nullptr;
  MODRT_NVRTC_FUNCTIONS(MODRT_NVRTC_DECLARE)
#undef MODRT_NVRTC_DECLARE
};

namespace {

constexpr const char* kSonames[] = {"libnvrtc.so.12", "libnvrtc.so"};
// Where the nvidia-cuda-nvrtc wheel puts them, under a package root.
constexpr const char* kWheelDir = "/nvidia/cuda_nvrtc/lib/";
// Where the header wheels put theirs, under a package root.
constexpr const char* kHeaderWheelDirs[] = {"/nvidia/cuda_runtime/include",
                                            "/nvidia/cuda_cccl/include"};

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// dlopen's reason, or `name` when it gave none.
std::string DlError(const std::string& name) {
  const char* why = dlerror();
  return why != nullptr ? why : name + ": not found";
}

std::string ArchList(const std::vector<int>& archs) {
  std::string s;
  for (int a : archs) s += StrCat(s.empty() ? "" : ", ", "sm_", a);
  return s.empty() ? "none" : s;
}

void Check(const Nvrtc::Api& api, nvrtcResult status, const char* what) {
  if (status != 0)
    throw Error("RuntimeError", StrCat(what, " failed: ", api.nvrtcGetErrorString(status)));
}

// Every library Load() opened, by path, with its dlopen handle; never freed.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Nvrtc>> by_path;
  std::map<void*, std::string> paths;  // dlopen handle -> path
};
Registry& Loaded() {
  static auto* registry = new Registry();
  return *registry;
}

bool LoadedFromWheel(void* handle) {
  Registry& r = Loaded();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.paths.find(handle);
  return it != r.paths.end() && it->second.find(kWheelDir) != std::string::npos;
}

struct Program {
  explicit Program(const Nvrtc::Api& api) : api(api) {}
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (handle != nullptr) api.nvrtcDestroyProgram(&handle);
  }
  const Nvrtc::Api& api;
  nvrtcProgram handle = nullptr;
};

}  // namespace

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> roots;
  while (!text.empty()) {
    size_t end = text.find('\n');
    roots.emplace_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return roots;
}

std::vector<std::string> HeaderDirs(const std::vector<std::string>& package_roots) {
  std::vector<std::string> dirs;
  for (const char* wheel_dir : kHeaderWheelDirs) {
    for (const std::string& root : package_roots) {
      const std::string dir = (root.empty() ? std::string(".") : root) + wheel_dir;
      if (IsDir(dir)) {
        dirs.push_back(dir);
        break;
      }
    }
  }
  return dirs;
}

std::string Find(const std::vector<std::string>& package_roots, std::string* why) {
  const char* chosen = std::getenv("MODRT_NVRTC_LIBRARY");
  if (chosen != nullptr && *chosen != '\0') return chosen;
  for (const std::string& root : package_roots) {
    const std::string lib = (root.empty() ? std::string(".") : root) + kWheelDir;
    for (const char* name : kSonames) {
      if (IsFile(lib + name)) return lib + name;
    }
  }
  std::string tried;
  for (const char* name : kSonames) {
    // A library Load() took from a wheel answers to its soname too, but it
    // is not one on the loader's path: a search without that wheel
    // (package_roots changed) must not find it.
    if (void* loaded = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) {
      dlclose(loaded);
      if (LoadedFromWheel(loaded)) {
        tried +=
            StrCat(tried.empty() ? "" : "; ", name, ": only loaded from a wheel not searched now");
        continue;
      }
    }
    // Only a probe: Load() opens it again, which costs a reference count.
    void* handle = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    if (handle != nullptr) {
      dlclose(handle);
      return name;
    }
    tried += (tried.empty() ? "" : "; ") + DlError(name);
  }
  if (why != nullptr) *why = "libnvrtc: cannot load the driver library (" + tried + ")";
  return "";
}

Arch ParseArch(std::string_view spelled) {
  Arch arch;
  arch.spelled = std::string(spelled);
  std::string_view rest = spelled;
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (rest.substr(0, prefix.size()) == prefix) {
      rest.remove_prefix(prefix.size());
      break;
    }
  }
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  bool letters = true;
  for (char c : rest.substr(digits))
    letters = letters && std::islower(static_cast<unsigned char>(c));
  if (digits == 0 || digits > 4 || !letters || rest.size() == spelled.size()) {
    throw Error("ValueError",
                StrCat("'", spelled, "' is not a CUDA arch (sm_XY, e.g. sm_86 or sm_90a)"));
  }
  arch.number = std::stoi(std::string(rest.substr(0, digits)));
  arch.suffix = std::string(rest.substr(digits));
  return arch;
}

const Nvrtc& Nvrtc::Load(const std::string& path) {
  Registry& r = Loaded();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_path.find(path);
  if (it != r.by_path.end()) return *it->second;

  // Never dlclose'd: NVRTC's state outlives any one user.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw Error("RuntimeError", "libnvrtc: cannot load the driver library (" + DlError(path) + ")");
  }
  auto api = std::make_shared<Api>();
#define MODRT_NVRTC_RESOLVE(member, symbol, ret, params)                                         \
  api->member = reinterpret_cast<ret(*) params>(dlsym(handle, symbol));                          \
  if (api->member == nullptr) {                                                                  \
    throw Error("RuntimeError", StrCat("libnvrtc: the driver library lacks the symbol ", symbol, \
                                       " (", path, ")"));                                        \
  }
  MODRT_NVRTC_FUNCTIONS(MODRT_NVRTC_RESOLVE)
#undef MODRT_NVRTC_RESOLVE
  std::unique_ptr<Nvrtc> nvrtc(new Nvrtc());
  nvrtc->path_ = path;
  int major = 0, minor = 0;
  Check(*api, api->nvrtcVersion(&major, &minor), "nvrtcVersion");
  nvrtc->version_ = StrCat(major, ".", minor);
  int n = 0;
  Check(*api, api->nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  nvrtc->archs_.resize(n);
  if (n > 0)
    Check(*api, api->nvrtcGetSupportedArchs(nvrtc->archs_.data()), "nvrtcGetSupportedArchs");
  nvrtc->api_ = std::move(api);
  r.paths.emplace(handle, path);
  return *r.by_path.emplace(path, std::move(nvrtc)).first->second;
}

int Nvrtc::Choose(const Arch& arch) const {
  int best = 0;
  for (int a : archs_) {
    if (a <= arch.number && a > best) best = a;
  }
  if (best == 0 || (!arch.suffix.empty() && best != arch.number)) {
    throw Error(
        "ValueError",
        StrCat("NVRTC ", version_, " cannot compile for ", arch.spelled, "; it supports ",
               ArchList(archs_),
               arch.suffix.empty() ? " (it compiles for the newest of those <= the arch asked for)"
                                   : " (an arch-specific target needs that exact arch)"));
  }
  return best;
}

std::string Nvrtc::Option(const Arch& arch, Output output) const {
  const int best = Choose(arch);
  const bool cubin = output == Output::kCubinWhenExact && best == arch.number;
  const std::string suffix = best == arch.number ? arch.suffix : "";
  return StrCat("--gpu-architecture=", cubin ? "sm_" : "compute_", best, suffix);
}

Nvrtc::Image Nvrtc::Compile(const std::string& source, const std::string& program_name,
                            const Arch& arch, Output output,
                            const std::vector<std::string>& include_dirs,
                            const std::vector<std::string>& options) const {
  const Api& api = *api_;
  Image image;
  image.option = Option(arch, output);
  image.cubin = image.option.find("=sm_") != std::string::npos;
  Program program(api);
  Check(api,
        api.nvrtcCreateProgram(&program.handle, source.c_str(), program_name.c_str(), 0, nullptr,
                               nullptr),
        "nvrtcCreateProgram");
  std::vector<std::string> texts = {image.option};
  for (const std::string& dir : include_dirs) texts.push_back("-I" + dir);
  texts.insert(texts.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& text : texts) argv.push_back(text.c_str());
  nvrtcResult status =
      api.nvrtcCompileProgram(program.handle, static_cast<int>(argv.size()), argv.data());
  if (status != 0) {
    size_t size = 0;
    api.nvrtcGetProgramLogSize(program.handle, &size);
    std::string log(size, '\0');
    if (size > 0) api.nvrtcGetProgramLog(program.handle, log.data());
    throw CompileFailure(image.option, StrCat(api.nvrtcGetErrorString(status), "\n", log.c_str()));
  }
  size_t size = 0;
  if (image.cubin) {
    Check(api, api.nvrtcGetCUBINSize(program.handle, &size), "nvrtcGetCUBINSize");
    image.bytes.resize(size);
    Check(api, api.nvrtcGetCUBIN(program.handle, image.bytes.data()), "nvrtcGetCUBIN");
  } else {
    Check(api, api.nvrtcGetPTXSize(program.handle, &size), "nvrtcGetPTXSize");
    image.bytes.resize(size);  // includes the terminating NUL the driver needs
    Check(api, api.nvrtcGetPTX(program.handle, image.bytes.data()), "nvrtcGetPTX");
  }
  return image;
}

const Nvrtc* Acquire(const std::vector<std::string>& package_roots, std::string* why) {
  const std::string path = Find(package_roots, why);
  if (path.empty()) return nullptr;
  try {
    return &Nvrtc::Load(path);
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return nullptr;
  }
}

}  // namespace cuda_nvrtc
}  // namespace modrt
