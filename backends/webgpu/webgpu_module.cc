// The WebGPU runtime's module (webgpu_module.h): compiling each function's
// WGSL, the compute pipelines of its launch shapes, and launches: bind groups
// (reused while the buffers are the same), the uniform ring of the scalar
// arguments, and a compute pass recorded into the device's batch.
#include "webgpu_module.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "modrt/launch_limits.h"
#include "modrt/plugin.h"
#include "webgpu_device.h"
#include "wgpu_native.h"
#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

void ReleaseKernel(const WgpuApi& api, Kernel& k) {
  if (k.uniform_buffer) api.wgpuBufferRelease(k.uniform_buffer);
  if (k.layout) api.wgpuPipelineLayoutRelease(k.layout);
  if (k.bind_layout) api.wgpuBindGroupLayoutRelease(k.bind_layout);
  if (k.shader) api.wgpuShaderModuleRelease(k.shader);
}

UniformLayout LayoutUniform(const FunctionInfo& info) {
  UniformLayout u;
  u.offsets.assign(info.args.size(), 0);
  uint32_t offset = 0;
  for (size_t i = 0; i < info.args.size(); ++i) {
    const ArgInfo& a = info.args[i];
    if (a.is_buffer) continue;
    const bool wgsl_scalar =
        a.dtype.lanes == 1 &&
        ((a.dtype.code == kDLInt && a.dtype.bits == 32) ||
         (a.dtype.code == kDLUInt && a.dtype.bits == 32) ||
         (a.dtype.code == kDLFloat && (a.dtype.bits == 32 || a.dtype.bits == 16)));
    if (!wgsl_scalar) {
      Fail("TypeError", info.name, ": argument ", i, " is a ", DTypeToString(a.dtype),
           " scalar; WGSL uniforms take int32, uint32, float32 or float16 (i32, u32, f32, f16)");
    }
    const uint32_t bytes = a.dtype.bits / 8;
    offset = (offset + bytes - 1) / bytes * bytes;
    u.offsets[i] = offset;
    offset += bytes;
  }
  u.size = offset == 0 ? 0 : (offset + 15) / 16 * 16;
  return u;
}

}  // namespace

WebGpuModule::WebGpuModule(Payload payload) : PayloadModule(std::move(payload)) {
  Workspace& ws = Workspace::Get();
  // Without an adapter the module still loads (and saves): it is compiled
  // by the first launch, which then says why there is no device.
  if (!ws.ok()) return;
  CompileAll(ws);
  compiled_ = true;
}

WebGpuModule::~WebGpuModule() {
  Workspace& ws = Workspace::Get();
  if (ws.ok()) ReleaseAll(ws.api());
}

ObjectRef WebGpuModule::GetFunction(const std::string& name) {
  return LaunchingFunction(
      name, [this](const FunctionInfo& info, size_t, const Args& args) { Launch(info, args); });
}

void WebGpuModule::CompileAll(Workspace& ws) {
  try {
    for (const auto& [name, info] : payload().fmap) Compile(ws, info);
  } catch (...) {
    ReleaseAll(ws.api());
    throw;
  }
}

void WebGpuModule::ReleaseAll(const WgpuApi& api) {
  for (auto& [key, p] : pipelines_) api.wgpuComputePipelineRelease(p.pipeline);
  for (auto& [name, c] : caches_) {
    if (c.group) api.wgpuBindGroupRelease(c.group);
  }
  for (auto& [name, k] : kernels_) ReleaseKernel(api, k);
  pipelines_.clear();
  caches_.clear();
  kernels_.clear();
}

void WebGpuModule::Compile(Workspace& ws, const FunctionInfo& info) {
  const WgpuApi& api = ws.api();
  const WGPULimits& limits = ws.info().limits;
  auto code = payload().smap.find(info.name);
  if (code == payload().smap.end())
    Fail("ValueError", "the module has no WGSL for '", info.name, "'");
  const std::string& wgsl = code->second;
  if (const size_t bad = InvalidUtf8At(wgsl); bad != std::string::npos) {
    Fail("ValueError", "the WGSL of '", info.name, "' is not UTF-8 text: byte ", bad, " (0x",
         "0123456789abcdef"[static_cast<unsigned char>(wgsl[bad]) >> 4],
         "0123456789abcdef"[static_cast<unsigned char>(wgsl[bad]) & 15],
         ") starts no valid character");
  }
  const WgslInfo scan = ScanWgsl(wgsl);

  Kernel k;
  k.info = &info;
  struct Guard {
    const WgpuApi& api;
    Kernel& k;
    bool armed = true;
    ~Guard() {
      if (armed) ReleaseKernel(api, k);
    }
  } guard{api, k};

  // The entry point: the @compute function named like the function, else the only one.
  const EntryPoint* entry = nullptr;
  for (const EntryPoint& e : scan.entries) {
    if (e.name == info.name) entry = &e;
  }
  if (entry == nullptr && scan.entries.size() == 1) entry = &scan.entries[0];
  if (entry == nullptr && scan.entries.size() > 1) {
    std::string names;
    for (const EntryPoint& e : scan.entries) names += (names.empty() ? "" : ", ") + e.name;
    Fail("ValueError", "the WGSL of '", info.name, "' has several @compute entry points (", names,
         ") and none is named '", info.name, "'");
  }
  std::array<bool, 3> launched{};
  for (const std::string& tag : info.launch_tags) {
    if (tag.rfind("threadIdx.", 0) == 0) launched[tag.back() - 'x'] = true;
    if (tag == "dyn_shared_mem") k.has_dyn_shared_override = true;
  }
  if (entry != nullptr) {
    k.entry = entry->name;
    k.scan = *entry;
    const uint32_t max[3] = {limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY,
                             limits.maxComputeWorkgroupSizeZ};
    int64_t threads = 1;
    bool all_fixed = true;
    for (int a = 0; a < 3; ++a) {
      const WorkgroupDim& d = entry->size[a];
      if (!d.value) {
        all_fixed = false;
        continue;
      }
      if (*d.value > max[a]) {
        Fail("ValueError", info.name, ": @workgroup_size ", "xyz"[a], " = ", *d.value,
             " exceeds the adapter's limit of ", max[a], " (", ws.info().name, ")");
      }
      threads *= *d.value;
    }
    if (all_fixed && threads > limits.maxComputeInvocationsPerWorkgroup) {
      Fail("ValueError", info.name, ": a workgroup of ", threads,
           " invocations exceeds the adapter's limit of ", limits.maxComputeInvocationsPerWorkgroup,
           " (", ws.info().name, ")");
    }
    if (k.has_dyn_shared_override) {
      bool declared = false;
      for (const std::string& o : scan.overrides) declared |= o == "dyn_shared_mem";
      k.has_dyn_shared_override = declared;
    }
  }

  for (const ArgInfo& a : info.args) k.num_buffers += a.is_buffer ? 1 : 0;
  if (k.num_buffers > limits.maxStorageBuffersPerShaderStage) {
    Fail("ValueError", info.name, " takes ", k.num_buffers, " buffers; the adapter allows ",
         limits.maxStorageBuffersPerShaderStage, " storage buffers per shader stage");
  }
  k.uniform = LayoutUniform(info);

  std::vector<WGPUBindGroupLayoutEntry> entries;
  for (size_t b = 0; b < k.num_buffers; ++b) {
    WGPUBindGroupLayoutEntry e{};
    e.binding = static_cast<uint32_t>(b);
    e.visibility = WGPUShaderStage_Compute;
    auto declared = scan.group0.find(e.binding);
    const bool read_only = declared != scan.group0.end() &&
                           declared->second.address_space == "storage" &&
                           (declared->second.access == "read" || declared->second.access.empty());
    e.buffer.type =
        read_only ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
    entries.push_back(e);
  }
  if (k.uniform.size > 0) {
    WGPUBindGroupLayoutEntry e{};
    e.binding = static_cast<uint32_t>(k.num_buffers);
    e.visibility = WGPUShaderStage_Compute;
    e.buffer.type = WGPUBufferBindingType_Uniform;
    e.buffer.hasDynamicOffset = 1;
    e.buffer.minBindingSize = k.uniform.size;
    entries.push_back(e);
  }

  std::string error = ws.Scoped([&] {
    WGPUShaderSourceWGSL source{};
    source.chain.sType = WGPUSType_ShaderSourceWGSL;
    source.code = View(wgsl);
    WGPUShaderModuleDescriptor sd{};
    sd.nextInChain = &source.chain;
    sd.label = View(info.name);
    k.shader = api.wgpuDeviceCreateShaderModule(ws.device(), &sd);
  });
  if (!error.empty()) Fail("ValueError", "the WGSL of '", info.name, "' does not compile: ", error);
  if (entry == nullptr) {
    Fail("ValueError", "the WGSL of '", info.name, "' has no @compute entry point");
  }
  error = ws.Scoped([&] {
    WGPUBindGroupLayoutDescriptor bd{};
    bd.entryCount = entries.size();
    bd.entries = entries.data();
    k.bind_layout = api.wgpuDeviceCreateBindGroupLayout(ws.device(), &bd);
    WGPUPipelineLayoutDescriptor pd{};
    pd.bindGroupLayoutCount = 1;
    pd.bindGroupLayouts = &k.bind_layout;
    k.layout = api.wgpuDeviceCreatePipelineLayout(ws.device(), &pd);
    if (k.uniform.size > 0) {
      const uint32_t align = std::max<uint32_t>(limits.minUniformBufferOffsetAlignment, 16);
      k.uniform_stride = (k.uniform.size + align - 1) / align * align;
      WGPUBufferDescriptor ud{};
      ud.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
      ud.size = static_cast<uint64_t>(k.uniform_stride) * Workspace::kMaxBatch;
      k.uniform_buffer = api.wgpuDeviceCreateBuffer(ws.device(), &ud);
    }
  });
  if (!error.empty()) Fail("ValueError", info.name, ": cannot lay out its bindings: ", error);

  guard.armed = false;
  Kernel& stored = kernels_.emplace(info.name, k).first->second;
  caches_[info.name];
  // A kernel whose workgroup size is fixed by the shader gets its pipeline
  // now, so that a shader that does not fit its bindings fails at load.
  bool launch_set = stored.has_dyn_shared_override;
  for (const WorkgroupDim& d : stored.scan.size) launch_set |= !d.override_name.empty();
  if (!launch_set) {
    LaunchConfig launch;
    for (int a = 0; a < 3; ++a) launch.block[a] = stored.scan.size[a].value.value_or(1);
    std::lock_guard lock(mu_);
    CreatePipeline(ws, stored, KeyOf(stored, launch), launch);
  }
  (void)launched;
}

WebGpuModule::Key WebGpuModule::KeyOf(const Kernel& k, const LaunchConfig& launch) {
  int64_t v[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    if (!k.scan.size[a].override_name.empty()) v[a] = launch.block[a];
  }
  return Key{k.info->name, v[0], v[1], v[2],
             k.has_dyn_shared_override ? launch.dyn_shared_bytes : 0};
}

const Pipeline& WebGpuModule::CreatePipeline(Workspace& ws, const Kernel& k, const Key& key,
                                             const LaunchConfig& launch) {
  const WgpuApi& api = ws.api();
  std::vector<std::string> names;
  std::vector<WGPUConstantEntry> constants;
  for (int a = 0; a < 3; ++a) {
    const std::string& o = k.scan.size[a].override_name;
    if (o.empty()) continue;
    bool seen = false;
    for (const std::string& n : names) seen |= n == o;
    if (seen) continue;  // one constant on several axes: the first axis sets it
    names.push_back(o);
    WGPUConstantEntry c{};
    c.value = static_cast<double>(launch.block[a]);
    constants.push_back(c);
  }
  if (k.has_dyn_shared_override) {
    names.push_back("dyn_shared_mem");
    WGPUConstantEntry c{};
    c.value = static_cast<double>(launch.dyn_shared_bytes);
    constants.push_back(c);
  }
  for (size_t i = 0; i < constants.size(); ++i) constants[i].key = View(names[i]);
  WGPUComputePipeline pipeline = nullptr;
  std::string error = ws.Scoped([&] {
    WGPUComputePipelineDescriptor pd{};
    pd.label = View(k.info->name);
    pd.layout = k.layout;
    pd.compute.module = k.shader;
    pd.compute.entryPoint = View(k.entry);
    pd.compute.constantCount = constants.size();
    pd.compute.constants = constants.data();
    pipeline = api.wgpuDeviceCreateComputePipeline(ws.device(), &pd);
  });
  if (!error.empty() || pipeline == nullptr) {
    if (pipeline) api.wgpuComputePipelineRelease(pipeline);
    Fail("ValueError", "WebGPU could not create the compute pipeline of '", k.info->name, "' on ",
         ws.info().name, ": ", error.empty() ? "no reason given" : error);
  }
  pipelines_created_.fetch_add(1);
  return pipelines_.emplace(key, Pipeline{pipeline}).first->second;
}

void WebGpuModule::Launch(const FunctionInfo& info, const Args& args) {
  Workspace& ws = Workspace::Get();
  if (!ws.ok())
    Fail("ValueError", "cannot launch ", info.name, ": webgpu(0) does not exist: ", ws.reason());
  KernelArgs k = KernelArgs::Pack(info, args, kDLWebGPU);
  ws.Require(k.device_id);
  const WgpuApi& api = ws.api();
  const WGPULimits& limits = ws.info().limits;
  if (!compiled_.load(std::memory_order_acquire)) {
    std::lock_guard lock(compile_mu_);
    if (!compiled_.load()) {
      CompileAll(ws);
      compiled_.store(true, std::memory_order_release);
    }
  }
  const Kernel& kernel = kernels_.at(info.name);
  for (int a = 0; a < 3; ++a) {
    if (k.launch.grid[a] > limits.maxComputeWorkgroupsPerDimension) {
      Fail("ValueError",
           LaunchLimitExceeded(info.name, StrCat("blockIdx.", "xyz"[a]), k.launch.grid[a],
                               limits.maxComputeWorkgroupsPerDimension,
                               "maxComputeWorkgroupsPerDimension", ws.info().name));
    }
  }
  const WGPUComputePipeline pipeline = GetPipeline(ws, kernel, info, k.launch);

  // The buffers (by id) and the uniform block of this launch.
  std::array<uint64_t, 16> ids_small{};
  std::vector<uint64_t> ids_large;
  uint64_t* ids = ids_small.data();
  if (kernel.num_buffers > ids_small.size()) {
    ids_large.resize(kernel.num_buffers);
    ids = ids_large.data();
  }
  std::array<uint8_t, 256> uniform_small{};
  std::vector<uint8_t> uniform_large;
  uint8_t* uniform = uniform_small.data();
  if (kernel.uniform.size > uniform_small.size()) {
    uniform_large.assign(kernel.uniform.size, 0);
    uniform = uniform_large.data();
  }
  size_t b = 0;
  for (size_t i = 0; i < info.args.size(); ++i) {
    if (info.args[i].is_buffer) {
      ids[b++] = static_cast<const Buffer*>(k.buffers[i]->data)->id;
    } else {
      std::memcpy(uniform + kernel.uniform.offsets[i], k.ptrs[i], k.sizes[i]);
    }
  }

  std::lock_guard lock(ws.submit_mu());
  LaunchCache& cache = caches_.at(info.name);
  // The bind group: the last one when the buffers are the same.
  const bool same_buffers = cache.group != nullptr &&
                            cache.buffer_ids.size() == kernel.num_buffers &&
                            std::equal(ids, ids + kernel.num_buffers, cache.buffer_ids.begin());
  if (!same_buffers) {
    std::array<WGPUBindGroupEntry, 17> fixed{};
    std::vector<WGPUBindGroupEntry> more;
    WGPUBindGroupEntry* entries = fixed.data();
    const size_t count = kernel.num_buffers + (kernel.uniform.size > 0 ? 1 : 0);
    if (count > fixed.size()) {
      more.resize(count);
      entries = more.data();
    }
    size_t e = 0;
    for (size_t i = 0; i < info.args.size(); ++i) {
      if (!info.args[i].is_buffer) continue;
      const auto* buf = static_cast<const Buffer*>(k.buffers[i]->data);
      entries[e] = WGPUBindGroupEntry{};
      entries[e].binding = static_cast<uint32_t>(e);
      entries[e].buffer = buf->buffer;
      entries[e].size = buf->size;
      ++e;
    }
    if (kernel.uniform.size > 0) {
      entries[e] = WGPUBindGroupEntry{};
      entries[e].binding = static_cast<uint32_t>(e);
      entries[e].buffer = kernel.uniform_buffer;
      entries[e].size = kernel.uniform.size;
    }
    WGPUBindGroupDescriptor bd{};
    bd.layout = kernel.bind_layout;
    bd.entryCount = count;
    bd.entries = entries;
    WGPUBindGroup group = api.wgpuDeviceCreateBindGroup(ws.device(), &bd);
    // The old group stays alive for the launches recorded with it.
    if (cache.group) api.wgpuBindGroupRelease(cache.group);
    cache.group = group;
    cache.buffer_ids.assign(ids, ids + kernel.num_buffers);
  }
  // The uniform block: a slot of the ring of its own in this batch, unless
  // it equals the last one written in this batch.
  uint32_t offset = 0;
  if (kernel.uniform.size > 0) {
    if (cache.batch != ws.batch()) {
      cache.batch = ws.batch();
      cache.next_slot = 0;
      cache.has_last = false;
    }
    const bool same =
        cache.has_last && std::memcmp(cache.last_uniform.data(), uniform, kernel.uniform.size) == 0;
    if (same) {
      offset = cache.last_offset;
    } else {
      if (cache.next_slot == Workspace::kMaxBatch) {
        ws.FlushLocked();  // the ring is full: its slots are free again after this
        cache.batch = ws.batch();
        cache.next_slot = 0;
      }
      offset = cache.next_slot++ * kernel.uniform_stride;
      api.wgpuQueueWriteBuffer(ws.queue(), kernel.uniform_buffer, offset, uniform,
                               kernel.uniform.size);
      cache.has_last = true;
      cache.last_offset = offset;
      cache.last_uniform.assign(uniform, uniform + kernel.uniform.size);
    }
  }
  WGPUComputePassEncoder pass = api.wgpuCommandEncoderBeginComputePass(ws.PendingLocked(), nullptr);
  api.wgpuComputePassEncoderSetPipeline(pass, pipeline);
  api.wgpuComputePassEncoderSetBindGroup(pass, 0, cache.group, kernel.uniform.size > 0 ? 1 : 0,
                                         &offset);
  api.wgpuComputePassEncoderDispatchWorkgroups(pass, static_cast<uint32_t>(k.launch.grid[0]),
                                               static_cast<uint32_t>(k.launch.grid[1]),
                                               static_cast<uint32_t>(k.launch.grid[2]));
  api.wgpuComputePassEncoderEnd(pass);
  api.wgpuComputePassEncoderRelease(pass);
  ws.RecordedLocked();
  if (std::string e = ws.TakeUncapturedError(); !e.empty()) {
    Fail("RuntimeError", "launch of ", info.name, " failed: ", e);
  }
}

WGPUComputePipeline WebGpuModule::GetPipeline(Workspace& ws, const Kernel& kernel,
                                              const FunctionInfo& info,
                                              const LaunchConfig& launch) {
  std::array<bool, 3> launched{};
  for (const std::string& tag : info.launch_tags) {
    if (tag.rfind("threadIdx.", 0) == 0) launched[tag.back() - 'x'] = true;
  }
  const WGPULimits& limits = ws.info().limits;
  const uint32_t max[3] = {limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY,
                           limits.maxComputeWorkgroupSizeZ};
  int64_t threads = 1;
  for (int a = 0; a < 3; ++a) {
    const WorkgroupDim& d = kernel.scan.size[a];
    const char axis = "xyz"[a];
    if (launched[a] && d.value && launch.block[a] != *d.value) {
      Fail("ValueError", info.name, ": its WGSL fixes @workgroup_size ", axis, " at ", *d.value,
           ", but threadIdx.", axis, " = ", launch.block[a],
           "; name an override constant in @workgroup_size to set it at launch");
    }
    const int64_t size = d.value ? *d.value : launch.block[a];
    if (size > max[a]) {
      Fail("ValueError",
           LaunchLimitExceeded(info.name, StrCat("threadIdx.", axis), size, max[a],
                               StrCat("maxComputeWorkgroupSize", static_cast<char>('X' + a)),
                               ws.info().name));
    }
    threads *= size;
  }
  if (threads > limits.maxComputeInvocationsPerWorkgroup) {
    Fail("ValueError", LaunchLimitExceeded(info.name, "threads per block", threads,
                                           limits.maxComputeInvocationsPerWorkgroup,
                                           "maxComputeInvocationsPerWorkgroup", ws.info().name));
  }
  if (launch.dyn_shared_bytes > 0 && !kernel.has_dyn_shared_override) {
    Fail("ValueError", info.name, ": dyn_shared_mem = ", launch.dyn_shared_bytes,
         " but its WGSL declares no `override dyn_shared_mem` to size workgroup memory with");
  }
  if (launch.dyn_shared_bytes > limits.maxComputeWorkgroupStorageSize) {
    Fail("ValueError", info.name, ": ", launch.dyn_shared_bytes,
         " bytes of workgroup memory exceed the adapter's limit of ",
         limits.maxComputeWorkgroupStorageSize);
  }
  const Key key = KeyOf(kernel, launch);
  std::lock_guard lock(mu_);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return found->second.pipeline;
  return CreatePipeline(ws, kernel, key, launch).pipeline;
}

}  // namespace webgpu
}  // namespace modrt
