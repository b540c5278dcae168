// libmodrt_runtime_metal.so: Metal on macOS, through the Objective-C runtime's
// C API. Metal.framework and libobjc are dlopen'ed like every other driver, so
// this file is plain C++ (no Objective-C toolchain, no link-time frameworks).
//
// Memory is MTLBuffers in shared storage (tensor data is the buffer object);
// MSL is compiled on first use of a function, one pipeline per function;
// arguments are bound in order: buffers with setBuffer, scalars with setBytes.
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "backend_identity.h"
#include "modrt/plugin/driver.h"
#include "modrt/plugin/plugin.h"

namespace modrt {
namespace metal {
namespace {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

using Id = void*;
using Sel = void*;

// MTLSize: passed by value to dispatchThreadgroups:threadsPerThreadgroup:.
struct MtlSize {
  unsigned long width, height, depth;
};

constexpr unsigned long kStorageModeShared = 0;  // MTLResourceStorageModeShared

class ObjC : public LazyDriverState<ObjC> {
 public:
  int count() const { return 1; }  // the system default device

  // [receiver selector args...], with objc_msgSend cast to the call's real type.
  template <typename R, typename... A>
  R Send(Id receiver, const char* selector, A... args) {
    using Fn = R (*)(Id, Sel, A...);
    return reinterpret_cast<Fn>(msg_send_)(receiver, sel_register_name_(selector), args...);
  }
  Id Class(const char* name) { return get_class_(name); }
  Id String(const std::string& s) {
    return Send<Id>(Class("NSString"), "stringWithUTF8String:", s.c_str());
  }
  std::string Utf8(Id ns_string) {
    if (ns_string == nullptr) return "";
    const char* s = Send<const char*>(ns_string, "UTF8String");
    return s ? s : "";
  }
  std::string ErrorText(Id ns_error) {
    return ns_error ? Utf8(Send<Id>(ns_error, "localizedDescription")) : "unknown error";
  }
  // A library from the bytes of a .metallib file.
  Id LibraryFromData(const std::string& metallib, Id* error) {
    Id data = dispatch_data_create_(metallib.data(), metallib.size(), nullptr, nullptr);
    Id library = Send<Id>(device_, "newLibraryWithData:error:", data, error);
    Send<void>(data, "release");
    return library;
  }
  Id device() const { return device_; }
  Id queue() const { return queue_; }

  // Objective-C objects made by convenience constructors are autoreleased:
  // every entry point that makes them runs inside a pool.
  class Pool {
   public:
    Pool() : objc_(ObjC::Get()), token_(objc_.pool_push_()) {}
    ~Pool() { objc_.pool_pop_(token_); }

   private:
    ObjC& objc_;
    void* token_;
  };

 private:
  friend class LazyDriverState<ObjC>;

  std::string Init() {
    if (!objc_lib_.Open({"/usr/lib/libobjc.A.dylib"}) ||
        !objc_lib_.Resolve("objc_msgSend", &msg_send_) ||
        !objc_lib_.Resolve("sel_registerName", &sel_register_name_) ||
        !objc_lib_.Resolve("objc_getClass", &get_class_) ||
        !objc_lib_.Resolve("objc_autoreleasePoolPush", &pool_push_) ||
        !objc_lib_.Resolve("objc_autoreleasePoolPop", &pool_pop_)) {
      return "no Objective-C runtime (Metal needs macOS): " + objc_lib_.error();
    }
    Id (*create_device)() = nullptr;
    // MODRT_METAL_DRIVER_LIBRARY, else the system's Metal.framework.
    if (!metal_lib_.Open(DriverLibraryCandidates(
            kBackendIdentity.name, {"/System/Library/Frameworks/Metal.framework/Metal"})) ||
        !metal_lib_.Resolve("MTLCreateSystemDefaultDevice", &create_device)) {
      return "Metal.framework is not loadable: " + metal_lib_.error();
    }
    if (!dispatch_lib_.Open({"/usr/lib/libSystem.B.dylib"}) ||
        !dispatch_lib_.Resolve("dispatch_data_create", &dispatch_data_create_)) {
      return "libdispatch is not loadable: " + dispatch_lib_.error();
    }
    device_ = create_device();
    if (device_ == nullptr) return "MTLCreateSystemDefaultDevice found no Metal device";
    queue_ = Send<Id>(device_, "newCommandQueue");
    if (queue_ == nullptr) return "the Metal device gave no command queue";
    return "";
  }

  DriverLibrary objc_lib_, metal_lib_, dispatch_lib_;
  // dispatch_data_create(buffer, size, queue, destructor); a null destructor copies the bytes.
  Id (*dispatch_data_create_)(const void*, size_t, Id, void*) = nullptr;
  void* msg_send_ = nullptr;
  Sel (*sel_register_name_)(const char*) = nullptr;
  Id (*get_class_)(const char*) = nullptr;
  void* (*pool_push_)() = nullptr;
  void (*pool_pop_)(void*) = nullptr;
  Id device_ = nullptr;
  Id queue_ = nullptr;
};

// The last committed command buffer: copies to the host wait for it.
class Inflight {
 public:
  static Inflight& Get() {
    static Inflight inflight;
    return inflight;
  }
  void Committed(Id command_buffer) {
    ObjC& objc = ObjC::Get();
    objc.Send<Id>(command_buffer, "retain");
    std::lock_guard lock(mu_);
    if (last_) objc.Send<void>(last_, "release");
    last_ = command_buffer;
  }
  void Wait() {
    ObjC& objc = ObjC::Get();
    Id last;
    {
      std::lock_guard lock(mu_);
      last = last_;
      last_ = nullptr;
    }
    if (last == nullptr) return;
    objc.Send<void>(last, "waitUntilCompleted");
    Id error = objc.Send<Id>(last, "error");
    std::string text = error ? objc.ErrorText(error) : "";
    objc.Send<void>(last, "release");
    if (!text.empty()) Fail("RuntimeError", "Metal command buffer failed: ", text);
  }

 private:
  std::mutex mu_;
  Id last_ = nullptr;
};

ObjC& Ready() {
  ObjC& objc = ObjC::Get();
  if (!objc.ok()) Fail("RuntimeError", "Metal is unavailable: ", objc.reason());
  return objc;
}

class MetalDeviceAPI final : public DriverDeviceAPI<ObjC> {
 public:
  void GetAttr(int, std::string_view name, Ret* ret) override {
    ObjC& objc = Ready();
    ObjC::Pool pool;
    if (name == "name") return ret->SetStr(objc.Utf8(objc.Send<Id>(objc.device(), "name")));
    if (name == "max_shared_memory_per_block") {
      return ret->SetInt(static_cast<int64_t>(
          objc.Send<unsigned long>(objc.device(), "maxThreadgroupMemoryLength")));
    }
    // Apple GPUs: 1024 threads per threadgroup, 32-wide SIMD groups.
    if (name == "max_threads_per_block") return ret->SetInt(1024);
    if (name == "warp_size") return ret->SetInt(32);
  }
  void* Alloc(int, size_t nbytes) override {
    ObjC& objc = Ready();
    Id buffer =
        objc.Send<Id>(objc.device(), "newBufferWithLength:options:",
                      static_cast<unsigned long>(std::max<size_t>(nbytes, 1)), kStorageModeShared);
    if (buffer == nullptr) Fail("MemoryError", "Metal could not allocate ", nbytes, " bytes");
    return buffer;
  }
  void Free(int, void* ptr) override { ObjC::Get().Send<void>(static_cast<Id>(ptr), "release"); }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    Inflight::Get().Wait();  // a running kernel may still read the buffer
    std::memcpy(Contents(t), src, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    Inflight::Get().Wait();
    std::memcpy(dst, Contents(t), nbytes);
  }
  void Sync(int) override { Inflight::Get().Wait(); }

 private:
  static char* Contents(const DLTensor* t) {
    auto* base = Ready().Send<char*>(static_cast<Id>(t->data), "contents");
    return base + t->byte_offset;
  }
};

// What a compiled Metal library file (.metallib) starts with.
constexpr char kMetallibMagic[] = {'M', 'T', 'L', 'B'};

class MetalModule final : public PayloadModule {
 public:
  explicit MetalModule(Payload payload) : PayloadModule(std::move(payload)) {
    // A metallib shader is loaded as a compiled library, never as source:
    // each must be a Metal library file, which is checked now, not at launch.
    if (this->payload().fmt != "metallib") return;
    for (const auto& kv : this->payload().smap) {
      if (kv.second.compare(0, sizeof(kMetallibMagic), kMetallibMagic, sizeof(kMetallibMagic)) !=
          0) {
        Fail("ValueError", "Metal module: the metallib shader of '", kv.first,
             "' is not a Metal library file (it does not start with 'MTLB')");
      }
    }
  }
  ~MetalModule() override {
    ObjC& objc = ObjC::Get();
    for (auto& kv : pipelines_) objc.Send<void>(kv.second, "release");
  }

  ObjectRef GetFunction(const std::string& name) override {
    return PackedLaunchingFunction(name, kDLMetal);
  }
  // A launch goes down once: the core packs the arguments, then calls here.
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const FunctionInfo& info, size_t, const PackedArgs& k) override {
    ObjC& objc = Ready();
    ObjC::Pool pool;
    Id pipeline = Pipeline(info.name);
    Id command_buffer = objc.Send<Id>(objc.queue(), "commandBuffer");
    Id encoder = objc.Send<Id>(command_buffer, "computeCommandEncoder");
    objc.Send<void>(encoder, "setComputePipelineState:", pipeline);
    for (size_t i = 0; i < k.ptrs.size(); ++i) {
      const auto index = static_cast<unsigned long>(i);
      if (const DLTensor* t = k.buffers[i]) {
        objc.Send<void>(encoder, "setBuffer:offset:atIndex:", static_cast<Id>(t->data),
                        static_cast<unsigned long>(t->byte_offset), index);
      } else {
        objc.Send<void>(encoder, "setBytes:length:atIndex:", static_cast<const void*>(k.ptrs[i]),
                        static_cast<unsigned long>(k.sizes[i]), index);
      }
    }
    if (k.launch.dyn_shared_bytes > 0) {
      objc.Send<void>(encoder, "setThreadgroupMemoryLength:atIndex:",
                      static_cast<unsigned long>(k.launch.dyn_shared_bytes), 0ul);
    }
    const LaunchConfig& l = k.launch;
    MtlSize grid{static_cast<unsigned long>(l.grid[0]), static_cast<unsigned long>(l.grid[1]),
                 static_cast<unsigned long>(l.grid[2])};
    MtlSize block{static_cast<unsigned long>(l.block[0]), static_cast<unsigned long>(l.block[1]),
                  static_cast<unsigned long>(l.block[2])};
    objc.Send<void>(encoder, "dispatchThreadgroups:threadsPerThreadgroup:", grid, block);
    objc.Send<void>(encoder, "endEncoding");
    objc.Send<void>(command_buffer, "commit");
    Inflight::Get().Committed(command_buffer);
  }

 private:
  // Compiles the function's MSL (or loads its metallib) once; later launches
  // reuse the pipeline.
  Id Pipeline(const std::string& name) {
    std::lock_guard lock(mu_);
    auto found = pipelines_.find(name);
    if (found != pipelines_.end()) return found->second;
    ObjC& objc = ObjC::Get();
    const std::string& shader = payload().smap.at(name);
    const bool metallib = payload().fmt == "metallib";
    Id error = nullptr;
    Id library = metallib ? objc.LibraryFromData(shader, &error)
                          : objc.Send<Id>(objc.device(), "newLibraryWithSource:options:error:",
                                          objc.String(shader), static_cast<Id>(nullptr), &error);
    if (library == nullptr) {
      Fail("RuntimeError", "Metal could not ", metallib ? "load the metallib of " : "compile ",
           name, ": ", objc.ErrorText(error));
    }
    Id function = objc.Send<Id>(library, "newFunctionWithName:", objc.String(name));
    objc.Send<void>(library, "release");
    if (function == nullptr) {
      Fail("ValueError", "the ", metallib ? "metallib" : "MSL", " of ", name,
           " has no kernel function named ", name);
    }
    Id pipeline = objc.Send<Id>(objc.device(),
                                "newComputePipelineStateWithFunction:error:", function, &error);
    objc.Send<void>(function, "release");
    if (pipeline == nullptr) {
      Fail("RuntimeError", "Metal pipeline for ", name, " failed: ", objc.ErrorText(error));
    }
    pipelines_.emplace(name, pipeline);
    return pipeline;
  }

  std::mutex mu_;
  std::unordered_map<std::string, Id> pipelines_;
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<MetalModule>(std::move(p));
  });
  static MetalDeviceAPI api;
  RegisterDeviceAPI(kBackendIdentity.name, &api);
}

}  // namespace
}  // namespace metal
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::metal::InitPlugin)
