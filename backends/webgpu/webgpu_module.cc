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
  for (WGPUBindGroupLayout l : k.bind_layouts) {
    if (l) api.wgpuBindGroupLayoutRelease(l);
  }
  if (k.shader) api.wgpuShaderModuleRelease(k.shader);
}

// The signature's arguments as text, for errors: "float32*, float32*, int32".
std::string ArgumentTypes(const FunctionInfo& info) {
  std::string s;
  for (size_t i = 0; i < info.args.size(); ++i) {
    s += (i ? ", " : "") + DTypeToString(info.args[i].dtype) + (info.args[i].is_buffer ? "*" : "");
  }
  return s.empty() ? "none" : s;
}

// Refuses a signature that does not fit the shader's own bindings, showing
// both: what the signature asks modrt to bind and what the shader declares.
void CheckArguments(const FunctionInfo& info, const Kernel& k) {
  auto refuse = [&](const std::string& why) {
    Fail("ValueError", info.name,
         ": the signature does not fit the bindings its WGSL declares: ", why,
         ". The signature's arguments: ", ArgumentTypes(info),
         "; the shader declares: ", DescribeInterface(k.wgsl, k.iface));
  };
  const std::vector<ShaderArg>& declared = k.iface.args;
  if (info.args.size() != declared.size()) {
    refuse(StrCat(info.args.size(), " arguments, the shader binds ", declared.size()));
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    const ArgInfo& a = info.args[i];
    const ShaderArg& d = declared[i];
    const std::string given = DTypeToString(a.dtype);
    if (a.is_buffer != d.is_buffer) {
      refuse(StrCat("argument ", i, " is a ", a.is_buffer ? "buffer" : "scalar", ", the shader's '",
                    d.name, "' a ", d.is_buffer ? "storage buffer" : "uniform scalar"));
    }
    if (a.is_buffer ? !BufferDtypeFits(given, d) : given != d.dtype) {
      refuse(StrCat("argument ", i, " is ", given, a.is_buffer ? "*" : "", ", the shader's '",
                    d.name, "' holds ", d.wgsl_type, " (", d.dtype, ")"));
    }
  }
}

// One buffer bound twice where the shader writes one binding and only reads
// the other is a usage conflict WebGPU refuses at dispatch: refused here,
// naming both. (Two writable bindings of one buffer are allowed.)
void CheckAliasing(const FunctionInfo& info, const Kernel& kernel, const KernelArgs& k) {
  for (size_t i = 0; i < info.args.size(); ++i) {
    if (!info.args[i].is_buffer) continue;
    for (size_t j = i + 1; j < info.args.size(); ++j) {
      if (!info.args[j].is_buffer || k.buffers[i]->data != k.buffers[j]->data) continue;
      const ShaderArg& a = kernel.iface.args[i];
      const ShaderArg& b = kernel.iface.args[j];
      if (a.read_only == b.read_only) continue;
      const ShaderArg& reader = a.read_only ? a : b;
      const ShaderArg& writer = a.read_only ? b : a;
      Fail("ValueError", info.name, ": arguments ", i, " ('", a.name, "') and ", j, " ('", b.name,
           "') are the same buffer, which the shader reads as '", reader.name,
           "' (var<storage, read>) and writes as '", writer.name,
           "' (read_write); WebGPU cannot bind one buffer both ways in a dispatch: pass a copy "
           "for '",
           reader.name, "'");
    }
  }
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
    for (WGPUBindGroup g : c.groups) {
      if (g) api.wgpuBindGroupRelease(g);
    }
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

  k.wgsl = scan;
  k.iface = ReadInterface(scan);
  if (!k.iface.error.empty()) {
    Fail("ValueError", "the WGSL of '", info.name, "' cannot be bound: ", k.iface.error);
  }
  CheckArguments(info, k);
  for (const ArgInfo& a : info.args) k.num_buffers += a.is_buffer ? 1 : 0;
  if (k.num_buffers > limits.maxStorageBuffersPerShaderStage) {
    Fail("ValueError", info.name, " takes ", k.num_buffers, " buffers; the adapter allows ",
         limits.maxStorageBuffersPerShaderStage, " storage buffers per shader stage");
  }
  if (k.iface.max_group >= limits.maxBindGroups) {
    Fail("ValueError", info.name, ": its WGSL uses @group(", k.iface.max_group,
         "); the adapter allows ", limits.maxBindGroups, " bind groups");
  }
  if (k.iface.uniforms.size() > limits.maxDynamicUniformBuffersPerPipelineLayout) {
    Fail("ValueError", info.name, ": its WGSL declares ", k.iface.uniforms.size(),
         " uniforms; modrt binds each with a dynamic offset and the adapter allows ",
         limits.maxDynamicUniformBuffersPerPipelineLayout);
  }
  // The uniform slot: each block at an offset WebGPU accepts for a binding.
  const uint32_t align = std::max<uint32_t>(limits.minUniformBufferOffsetAlignment, 16);
  std::vector<uint32_t> block_of_resource(scan.resources.size(), 0);
  for (size_t u = 0; u < k.iface.uniforms.size(); ++u) {
    k.block_offsets.push_back(k.uniform_size);
    block_of_resource[k.iface.uniforms[u].resource] = k.uniform_size;
    k.uniform_size += (k.iface.uniforms[u].size + align - 1) / align * align;
  }
  k.scalar_offsets.assign(info.args.size(), 0);
  for (size_t i = 0; i < info.args.size(); ++i) {
    const ShaderArg& d = k.iface.args[i];
    if (!d.is_buffer) k.scalar_offsets[i] = block_of_resource[d.resource] + d.offset;
  }

  std::vector<std::vector<WGPUBindGroupLayoutEntry>> entries(k.iface.max_group + 1);
  for (const Resource& r : scan.resources) {
    WGPUBindGroupLayoutEntry e{};
    e.binding = r.binding;
    e.visibility = WGPUShaderStage_Compute;
    if (r.address_space == "uniform") {
      e.buffer.type = WGPUBufferBindingType_Uniform;
      e.buffer.hasDynamicOffset = 1;
    } else {
      const bool read_only = r.access.empty() || r.access == "read";
      e.buffer.type =
          read_only ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
    }
    entries[r.group].push_back(e);
  }
  for (size_t u = 0; u < k.iface.uniforms.size(); ++u) {
    const Resource& r = scan.resources[k.iface.uniforms[u].resource];
    for (WGPUBindGroupLayoutEntry& e : entries[r.group]) {
      if (e.binding == r.binding) e.buffer.minBindingSize = k.iface.uniforms[u].size;
    }
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
    for (const auto& group_entries : entries) {
      WGPUBindGroupLayoutDescriptor bd{};
      bd.entryCount = group_entries.size();
      bd.entries = group_entries.data();
      k.bind_layouts.push_back(api.wgpuDeviceCreateBindGroupLayout(ws.device(), &bd));
    }
    WGPUPipelineLayoutDescriptor pd{};
    pd.bindGroupLayoutCount = k.bind_layouts.size();
    pd.bindGroupLayouts = k.bind_layouts.data();
    k.layout = api.wgpuDeviceCreatePipelineLayout(ws.device(), &pd);
    if (k.uniform_size > 0) {
      k.uniform_stride = k.uniform_size;  // a multiple of the offset alignment
      WGPUBufferDescriptor ud{};
      ud.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
      ud.size = static_cast<uint64_t>(k.uniform_stride) * Workspace::kMaxBatch;
      k.uniform_buffer = api.wgpuDeviceCreateBuffer(ws.device(), &ud);
    }
  });
  if (!error.empty()) {
    Fail("ValueError", info.name, ": cannot lay out its bindings (",
         DescribeInterface(scan, k.iface), "): ", error);
  }

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

  // The buffers (by id) and the uniform slot of this launch.
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
  if (kernel.uniform_size > uniform_small.size()) {
    uniform_large.assign(kernel.uniform_size, 0);
    uniform = uniform_large.data();
  }
  size_t b = 0;
  for (size_t i = 0; i < info.args.size(); ++i) {
    if (info.args[i].is_buffer) {
      const auto* buf = static_cast<const Buffer*>(k.buffers[i]->data);
      const ShaderArg& declared = kernel.iface.args[i];
      if (buf->size < declared.min_bytes) {
        const Resource& r = kernel.wgsl.resources[declared.resource];
        Fail("ValueError", info.name, ": argument ", i, " ('", declared.name, "') holds ",
             buf->size, " bytes; the shader's ", r.name, ": ", r.type, " needs ",
             declared.min_bytes);
      }
      ids[b++] = buf->id;
    } else {
      std::memcpy(uniform + kernel.scalar_offsets[i], k.ptrs[i], k.sizes[i]);
    }
  }
  CheckAliasing(info, kernel, k);

  std::lock_guard lock(ws.submit_mu());
  LaunchCache& cache = caches_.at(info.name);
  // The bind groups: the last ones when the buffers are the same.
  const bool same_buffers = !cache.groups.empty() &&
                            cache.buffer_ids.size() == kernel.num_buffers &&
                            std::equal(ids, ids + kernel.num_buffers, cache.buffer_ids.begin());
  if (!same_buffers) {
    std::vector<std::vector<WGPUBindGroupEntry>> entries(kernel.bind_layouts.size());
    for (size_t i = 0; i < info.args.size(); ++i) {
      if (!info.args[i].is_buffer) continue;
      const Resource& r = kernel.wgsl.resources[kernel.iface.args[i].resource];
      const auto* buf = static_cast<const Buffer*>(k.buffers[i]->data);
      WGPUBindGroupEntry e{};
      e.binding = r.binding;
      e.buffer = buf->buffer;
      e.size = buf->size;
      entries[r.group].push_back(e);
    }
    for (size_t u = 0; u < kernel.iface.uniforms.size(); ++u) {
      const Resource& r = kernel.wgsl.resources[kernel.iface.uniforms[u].resource];
      WGPUBindGroupEntry e{};
      e.binding = r.binding;
      e.buffer = kernel.uniform_buffer;
      e.offset = kernel.block_offsets[u];
      e.size = kernel.iface.uniforms[u].size;
      entries[r.group].push_back(e);
    }
    // The old groups stay alive for the launches recorded with them.
    for (WGPUBindGroup g : cache.groups) {
      if (g) api.wgpuBindGroupRelease(g);
    }
    cache.groups.clear();
    cache.buffer_ids.clear();
    // Inside an error scope: a refused bind group is an error now, before
    // anything is recorded, never an invalid batch for the queue.
    std::vector<WGPUBindGroup> groups;
    const std::string error = ws.Scoped([&] {
      for (size_t g = 0; g < entries.size(); ++g) {
        WGPUBindGroupDescriptor bd{};
        bd.layout = kernel.bind_layouts[g];
        bd.entryCount = entries[g].size();
        bd.entries = entries[g].data();
        groups.push_back(api.wgpuDeviceCreateBindGroup(ws.device(), &bd));
      }
    });
    if (!error.empty()) {
      for (WGPUBindGroup g : groups) {
        if (g) api.wgpuBindGroupRelease(g);
      }
      Fail("ValueError", info.name, ": WebGPU refused its bindings (",
           DescribeInterface(kernel.wgsl, kernel.iface), "): ", error);
    }
    cache.groups = std::move(groups);
    cache.buffer_ids.assign(ids, ids + kernel.num_buffers);
  }
  // The uniform slot: a slot of the ring of its own in this batch, unless
  // it equals the last one written in this batch.
  uint32_t offset = 0;
  if (kernel.uniform_size > 0) {
    if (cache.batch != ws.batch()) {
      cache.batch = ws.batch();
      cache.next_slot = 0;
      cache.has_last = false;
    }
    const bool same =
        cache.has_last && std::memcmp(cache.last_uniform.data(), uniform, kernel.uniform_size) == 0;
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
                               kernel.uniform_size);
      cache.has_last = true;
      cache.last_offset = offset;
      cache.last_uniform.assign(uniform, uniform + kernel.uniform_size);
    }
  }
  WGPUComputePassEncoder pass = api.wgpuCommandEncoderBeginComputePass(ws.PendingLocked(), nullptr);
  api.wgpuComputePassEncoderSetPipeline(pass, pipeline);
  // Every uniform of the kernel reads the same slot.
  std::array<uint32_t, 16> offsets_small{};
  std::vector<uint32_t> offsets_large;
  uint32_t* dynamic_offsets = offsets_small.data();
  if (kernel.iface.uniforms.size() > offsets_small.size()) {
    offsets_large.resize(kernel.iface.uniforms.size());
    dynamic_offsets = offsets_large.data();
  }
  std::fill(dynamic_offsets, dynamic_offsets + kernel.iface.uniforms.size(), offset);
  for (size_t g = 0; g < cache.groups.size(); ++g) {
    size_t uniforms = 0;
    for (const UniformBlock& u : kernel.iface.uniforms) {
      uniforms += kernel.wgsl.resources[u.resource].group == g ? 1 : 0;
    }
    api.wgpuComputePassEncoderSetBindGroup(pass, static_cast<uint32_t>(g), cache.groups[g],
                                           uniforms, dynamic_offsets);
  }
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
