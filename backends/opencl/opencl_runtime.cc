// libmodrt_runtime_opencl.so: OpenCL devices and modules on a lazily loaded
// libOpenCL (PoCL on a plain CPU machine). This file: the modules (programs
// built per device, kernels, launches) and the plugin's entry point; the
// driver state is opencl_driver.h's, the device API opencl_device_api.cc's.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/plugin/launch_limits.h"
#include "modrt/plugin/plugin.h"
#include "opencl_driver.h"
#include "opencl_graphs.h"

namespace modrt {
namespace opencl {
namespace {

// Creates a program from `code` (OpenCL C when fmt is "cl", else a device
// binary) and builds it for one device. On a build failure returns null with
// the build status and log in `log`; driver errors throw.
cl_program CreateAndBuild(int device_id, const std::string& fmt, const std::string& code,
                          std::string* log) {
  Workspace& ws = Workspace::Get();
  const ClApi& cl = ws.cl();
  const Device& dev = ws.device(device_id);
  cl_int err = CL_SUCCESS;
  cl_program program = nullptr;
  if (fmt == "cl") {
    const char* text = code.c_str();
    size_t length = code.size();
    program = cl.clCreateProgramWithSource(dev.context, 1, &text, &length, &err);
  } else {
    auto bytes = reinterpret_cast<const unsigned char*>(code.data());
    size_t length = code.size();
    cl_int binary_status = CL_SUCCESS;
    program = cl.clCreateProgramWithBinary(dev.context, 1, &dev.id, &length, &bytes, &binary_status,
                                           &err);
  }
  MODRT_CL_CHECK(err, StrCat("loading the ", fmt, " program"));
  cl_int status = cl.clBuildProgram(program, 1, &dev.id, "", nullptr, nullptr);
  if (status == CL_SUCCESS) return program;
  size_t size = 0;
  cl.clGetProgramBuildInfo(program, dev.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string text(size, '\0');
  cl.clGetProgramBuildInfo(program, dev.id, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  cl.clReleaseProgram(program);
  *log = StrCat(ClError(status), ":\n", text);
  return nullptr;
}

// `opencl.check_build(device_id, source, names)`: builds OpenCL C on a device
// and creates each kernel named in the space-separated `names`, then releases
// them: "" when all is well, else the build log or the missing kernel. What
// modrt.compile runs where this runtime and a device are present.
std::string CheckBuild(int device_id, const std::string& source, const std::string& names) {
  std::string log;
  cl_program program = CreateAndBuild(device_id, "cl", source, &log);
  if (program == nullptr) return log;
  const ClApi& cl = Workspace::Get().cl();
  std::string missing;
  size_t at = 0;
  while (at < names.size()) {
    size_t end = names.find(' ', at);
    if (end == std::string::npos) end = names.size();
    std::string name = names.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = cl.clCreateKernel(program, name.c_str(), &err);
    if (kernel != nullptr) cl.clReleaseKernel(kernel);
    if (err != CL_SUCCESS) {
      missing += StrCat("no kernel '", name, "' in the built program (", ClError(err), ")\n");
    }
  }
  cl.clReleaseProgram(program);
  return missing;
}

// One kernel on one device. cl_kernel argument state is shared, so setting
// arguments and enqueueing happen under one lock.
struct Kernel {
  std::mutex mu;
  cl_program program = nullptr;  // the module's, for a graph's kernels of its own
  cl_kernel kernel = nullptr;
  size_t max_group_size = 0;  // CL_KERNEL_WORK_GROUP_SIZE on its device
};

class OpenCLModule final : public PayloadModule {
 public:
  explicit OpenCLModule(Payload payload) : PayloadModule(std::move(payload)) {}
  ~OpenCLModule() override {
    const ClApi& cl = Workspace::Get().cl();
    for (auto& per_device : kernels_) {
      for (auto& k : per_device) {
        if (k && k->kernel) cl.clReleaseKernel(k->kernel);
      }
    }
    for (cl_program p : programs_) {
      if (p) cl.clReleaseProgram(p);
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return PackedLaunchingFunction(name, kDLOpenCL);
  }
  // A launch goes down once: the core packs the arguments, then calls here.
  bool LaunchesPacked() const override { return true; }
  void LaunchPacked(const FunctionInfo& info, size_t index, const PackedArgs& k) override {
    const int device_id = k.device_id;
    Workspace& ws = Workspace::Get();
    const Device& dev = ws.device(device_id);
    Kernel& kernel = GetKernel(device_id, index, info.name);
    const ClApi& cl = ws.cl();
    bool has_block = false, has_dyn_shared = false;
    for (const auto& tag : info.launch_tags) {
      has_block |= tag.rfind("threadIdx", 0) == 0;
      has_dyn_shared |= tag == "dyn_shared_mem";
    }
    CheckLimits(info, k.launch, dev, kernel);
    size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      local[d] = static_cast<size_t>(k.launch.block[d]);
      global[d] = static_cast<size_t>(k.launch.grid[d]) * local[d];
    }
    Stream& stream = StreamOf(device_id, k.NativeStream(kDLOpenCL));
    if (Graph* graph = k.Capturing() ? stream.capture.get() : nullptr) {
      // Captured: recorded with its arguments, not run (opencl_graphs.h).
      return graph->Record(LaunchToRecord{kernel.program, info.name, k, has_dyn_shared,
                                          static_cast<size_t>(k.launch.dyn_shared_bytes), global,
                                          has_block ? local : nullptr});
    }
    std::lock_guard lock(kernel.mu);
    for (size_t i = 0; i < k.ptrs.size(); ++i) {
      MODRT_CL_CHECK(
          cl.clSetKernelArg(kernel.kernel, static_cast<cl_uint>(i), k.sizes[i], k.ptrs[i]),
          StrCat("setting argument ", i, " of ", info.name));
    }
    if (has_dyn_shared) {
      // Dynamic shared memory is the kernel's trailing __local pointer.
      MODRT_CL_CHECK(cl.clSetKernelArg(kernel.kernel, static_cast<cl_uint>(k.ptrs.size()),
                                       static_cast<size_t>(k.launch.dyn_shared_bytes), nullptr),
                     StrCat("setting the dynamic local memory of ", info.name));
    }
    MODRT_CL_CHECK(cl.clEnqueueNDRangeKernel(stream.queue, kernel.kernel, 3, nullptr, global,
                                             has_block ? local : nullptr, 0, nullptr, nullptr),
                   StrCat("launch of ", info.name));
    CountsOf(device_id).launches.fetch_add(1);
  }

 private:
  // OpenCL reports a block over the limits only as CL_INVALID_WORK_GROUP_SIZE
  // and has none for the grid (PoCL traps at 2**32 work items): checked here,
  // before the driver sees the launch.
  static void CheckLimits(const FunctionInfo& info, const LaunchConfig& launch, const Device& dev,
                          const Kernel& kernel) {
    int64_t threads = 1;
    for (int a = 0; a < 3; ++a) {
      const std::string axis(1, "xyz"[a]);
      if (static_cast<uint64_t>(launch.grid[a]) > kMaxGroups) {
        Fail("ValueError", LaunchLimitExceeded(info.name, "blockIdx." + axis, launch.grid[a],
                                               kMaxGroups, "work-groups per dimension", dev.name));
      }
      if (static_cast<uint64_t>(launch.block[a]) > dev.max_item_sizes[a]) {
        Fail("ValueError",
             LaunchLimitExceeded(info.name, "threadIdx." + axis, launch.block[a],
                                 dev.max_item_sizes[a],
                                 StrCat("CL_DEVICE_MAX_WORK_ITEM_SIZES[", a, "]"), dev.name));
      }
      const uint64_t items =
          static_cast<uint64_t>(launch.grid[a]) * static_cast<uint64_t>(launch.block[a]);
      if (items > kMaxGlobalItems) {
        Fail("ValueError",
             LaunchLimitExceeded(info.name, "blockIdx." + axis + " * threadIdx." + axis,
                                 static_cast<int64_t>(items), kMaxGlobalItems,
                                 "work items per dimension", dev.name));
      }
      threads *= launch.block[a];
    }
    if (static_cast<uint64_t>(threads) > kernel.max_group_size) {
      Fail("ValueError",
           LaunchLimitExceeded(info.name, "threads per block", threads, kernel.max_group_size,
                               "CL_KERNEL_WORK_GROUP_SIZE", dev.name));
    }
  }

  // Builds the program for a device on first use (source is compiled here:
  // the receiving end of a cross-compile), then creates the kernel.
  Kernel& GetKernel(int device_id, size_t index, const std::string& name) {
    std::lock_guard lock(mu_);
    Workspace& ws = Workspace::Get();
    const ClApi& cl = ws.cl();
    if (programs_.size() <= static_cast<size_t>(device_id)) {
      programs_.resize(device_id + 1, nullptr);
      kernels_.resize(device_id + 1);
    }
    cl_program& program = programs_[device_id];
    if (program == nullptr) program = BuildProgram(device_id);
    auto& per_device = kernels_[device_id];
    if (per_device.empty()) per_device.resize(payload().fmap.size());
    std::unique_ptr<Kernel>& slot = per_device[index];
    if (!slot) {
      cl_int err = CL_SUCCESS;
      cl_kernel kernel = cl.clCreateKernel(program, name.c_str(), &err);
      MODRT_CL_CHECK(err,
                     StrCat("creating kernel '", name, "' (is it a __kernel in the program?)"));
      slot = std::make_unique<Kernel>();
      slot->program = program;
      slot->kernel = kernel;
      const Device& dev = ws.device(device_id);
      slot->max_group_size = dev.max_group_size;
      cl.clGetKernelWorkGroupInfo(kernel, dev.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size_t),
                                  &slot->max_group_size, nullptr);
    }
    return *slot;
  }

  cl_program BuildProgram(int device_id) {
    std::string log;
    cl_program program = CreateAndBuild(device_id, payload().fmt, payload().code, &log);
    if (program == nullptr) {
      Fail("RuntimeError", "OpenCL program build failed on ",
           Workspace::Get().DeviceString(device_id, CL_DEVICE_NAME), ":\n", log);
    }
    return program;
  }

  std::mutex mu_;
  std::vector<cl_program> programs_;                           // per device
  std::vector<std::vector<std::unique_ptr<Kernel>>> kernels_;  // per device, per function
};

void InitPlugin() {
  RegisterRuntimeModule(kBackendIdentity, [](Payload p) -> std::unique_ptr<PayloadModule> {
    return std::make_unique<OpenCLModule>(std::move(p));
  });
  RegisterDeviceApi();
  // What an OpenCL device enqueued, counted since the process began, by name:
  // launches one by one, graph recordings (captures and rebound replays'
  // re-recordings), graph replays.
  RegisterGlobal("opencl.submission_count", [](const Args& args, Ret* ret) {
    args.ExpectCount(2, "opencl.submission_count");
    const int id = static_cast<int>(args.Int(0));
    Workspace::Get().device(id);  // checks the id
    const SubmissionCounts& counts = CountsOf(id);
    const std::string_view name = args.Str(1);
    if (name == "launches") return ret->SetInt(counts.launches.load());
    if (name == "graph_recordings") return ret->SetInt(counts.graph_recordings.load());
    if (name == "graph_replays") return ret->SetInt(counts.graph_replays.load());
    Fail("ValueError", "opencl.submission_count: no count named '", name,
         "' (launches, graph_recordings, graph_replays)");
  });
  RegisterGlobal("opencl.check_build", [](const Args& args, Ret* ret) {
    args.ExpectCount(3, "opencl.check_build");
    ret->SetStr(CheckBuild(static_cast<int>(args.Int(0)), std::string(args.Str(1)),
                           std::string(args.Str(2))));
  });
}

}  // namespace
}  // namespace opencl
}  // namespace modrt

MODRT_DEFINE_PLUGIN(modrt::opencl::InitPlugin)