// Host modules (kind "so"): a compiled C shared object carried as bytes.
//
// Each function `f` in the fmap is reached through a wrapper the CPU codegen
// emits, `int32_t __modrt_call_f(void* const* args)`, where args[i] points to
// argument i in its declared C type (KernelArgs slots). Loading goes through a
// memfd, so no file is left behind.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "elf_check.h"
#include "modrt/core/backend.h"
#include "stream.h"

namespace modrt {
namespace {

using HostEntry = int32_t (*)(void* const* args);

const BackendInfo& HostBackend() {
  static const BackendInfo info{"so", "Host", kDLCPU, PayloadShape::kSingleBinary, {"so"}};
  return info;
}

class HostModule final : public PayloadModule {
 public:
  explicit HostModule(Ref<PayloadObj> payload) : PayloadModule("so", std::move(payload)) {
    const std::string& image = this->payload().code;
    std::string damage = ElfImageProblem(image);
    if (!damage.empty())
      Fail("ValueError", "cannot load host module: its shared object is damaged: ", damage);
    int fd = memfd_create("modrt-host-module", MFD_CLOEXEC);
    if (fd < 0) Fail("OSError", "memfd_create failed while loading a host module");
    size_t written = 0;
    while (written < image.size()) {
      ssize_t n = write(fd, image.data() + written, image.size() - written);
      if (n <= 0) {
        close(fd);
        Fail("OSError", "could not stage a host module image in memory");
      }
      written += static_cast<size_t>(n);
    }
    // The loader knows objects by path, and fd numbers are reused: while this
    // module lives it keeps its fd, and a number that still names an object
    // someone else loaded is traded for a fresh one.
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    while (void* stale = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(stale);
      int fresh = dup(fd);
      close(fd);
      if (fresh < 0) Fail("OSError", "dup failed while loading a host module");
      fd = fresh;
      path = "/proc/self/fd/" + std::to_string(fd);
    }
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      close(fd);
      const char* why = dlerror();
      Fail("ValueError", "cannot load host module: ", why ? why : "dlopen failed");
    }
    fd_ = fd;
    for (const auto& kv : this->payload().fmap) {
      auto entry =
          reinterpret_cast<HostEntry>(dlsym(handle_, ("__modrt_call_" + kv.first).c_str()));
      if (entry == nullptr) {
        dlclose(handle_);
        close(fd_);
        Fail("ValueError", "host module has no entry for function '", kv.first,
             "' (expected symbol __modrt_call_", kv.first, ")");
      }
      entries_.emplace(kv.first, entry);
    }
  }
  ~HostModule() override {
    dlclose(handle_);
    close(fd_);
  }

  Ref<FunctionObj> GetFunction(const std::string& name) override {
    auto it = entries_.find(name);
    if (it == entries_.end()) return nullptr;
    Ref<HostModule> self(this);  // functions keep the code mapped
    const FunctionInfo* info = &payload().Function(name);
    HostEntry entry = it->second;
    // Checked and packed on the caller's thread; run by the stream's worker.
    return HostStreamedLaunch(
        [self, info, entry](const Args& args) -> std::function<void()> {
          auto k = std::make_shared<KernelArgs>(KernelArgs::Pack(*info, args, kDLCPU));
          return [self, info, entry, k] {
            int32_t rc = entry(k->ptrs.data());
            if (rc != 0) Fail("RuntimeError", "host function ", info->name, " returned ", rc);
          };
        },
        info);
  }

 private:
  void* handle_ = nullptr;
  int fd_ = -1;
  std::map<std::string, HostEntry> entries_;
};

MODRT_STATIC_INIT([] {
  RegisterRuntimeModule(HostBackend(), [](Ref<PayloadObj> p) -> Ref<ModuleObj> {
    return MakeObject<HostModule>(std::move(p));
  });
});

}  // namespace
}  // namespace modrt
