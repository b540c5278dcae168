// The WebGPU runtime's pipelines (webgpu_module.h): a function's WGSL
// compiled into a Kernel (the shader module, its bind group and pipeline
// layouts, its uniform slot) and checked against the adapter and the
// signature, and the cache of compute pipelines, one per launch shape (the
// values of the override constants in @workgroup_size and dyn_shared_mem).
#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "modrt/plugin/launch_limits.h"
#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_module.h"
#include "wgpu_native.h"
#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

void CheckUtf8(const FunctionInfo& info, const std::string& wgsl) {
  const size_t bad = InvalidUtf8At(wgsl);
  if (bad == std::string::npos) return;
  Fail("ValueError", "the WGSL of '", info.name, "' is not UTF-8 text: byte ", bad, " (0x",
       "0123456789abcdef"[static_cast<unsigned char>(wgsl[bad]) >> 4],
       "0123456789abcdef"[static_cast<unsigned char>(wgsl[bad]) & 15],
       ") starts no valid character");
}

// The @compute function named like the function, else the only one; null
// when there is none (refused once the WGSL compiled: its errors come first).
const EntryPoint* FindEntryPoint(const FunctionInfo& info, const WgslInfo& scan) {
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
  return entry;
}

// A literal @workgroup_size over the adapter's limits is refused at load.
void CheckFixedWorkgroupSize(const Workspace& ws, const FunctionInfo& info,
                             const EntryPoint& entry) {
  const WGPULimits& limits = ws.info().limits;
  const uint32_t max[3] = {limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY,
                           limits.maxComputeWorkgroupSizeZ};
  int64_t threads = 1;
  bool all_fixed = true;
  for (int a = 0; a < 3; ++a) {
    const WorkgroupDim& d = entry.size[a];
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

// The bindings against the adapter's limits on buffers, groups and uniforms.
void CheckBindingLimits(const Workspace& ws, const FunctionInfo& info, const Kernel& k) {
  const WGPULimits& limits = ws.info().limits;
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
}

// The uniform slot: each block at an offset WebGPU accepts for a binding,
// each scalar argument at its member's offset in its block.
void LayOutUniformSlot(const Workspace& ws, const FunctionInfo& info, Kernel& k) {
  const uint32_t align = std::max<uint32_t>(ws.info().limits.minUniformBufferOffsetAlignment, 16);
  std::vector<uint32_t> block_of_resource(k.wgsl.resources.size(), 0);
  k.uniforms_per_group.assign(k.iface.max_group + 1, 0);
  for (size_t u = 0; u < k.iface.uniforms.size(); ++u) {
    ++k.uniforms_per_group[k.wgsl.resources[k.iface.uniforms[u].resource].group];
    k.block_offsets.push_back(k.uniform_size);
    block_of_resource[k.iface.uniforms[u].resource] = k.uniform_size;
    k.uniform_size += (k.iface.uniforms[u].size + align - 1) / align * align;
  }
  k.scalar_offsets.assign(info.args.size(), 0);
  for (size_t i = 0; i < info.args.size(); ++i) {
    const ShaderArg& d = k.iface.args[i];
    if (!d.is_buffer) k.scalar_offsets[i] = block_of_resource[d.resource] + d.offset;
  }
}

// The layout entries of each bind group: storage buffers as the shader
// declares their access, uniforms with a dynamic offset.
std::vector<std::vector<WGPUBindGroupLayoutEntry>> LayoutEntries(const Kernel& k) {
  std::vector<std::vector<WGPUBindGroupLayoutEntry>> entries(k.iface.max_group + 1);
  for (const Resource& r : k.wgsl.resources) {
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
  for (const UniformBlock& u : k.iface.uniforms) {
    const Resource& r = k.wgsl.resources[u.resource];
    for (WGPUBindGroupLayoutEntry& e : entries[r.group]) {
      if (e.binding == r.binding) e.buffer.minBindingSize = u.size;
    }
  }
  return entries;
}

// The shader module: wgpu validates the WGSL here.
void CreateShader(Workspace& ws, const FunctionInfo& info, const std::string& wgsl, Kernel& k) {
  const std::string error = ws.Scoped([&] {
    WGPUShaderSourceWGSL source{};
    source.chain.sType = WGPUSType_ShaderSourceWGSL;
    source.code = View(wgsl);
    WGPUShaderModuleDescriptor sd{};
    sd.nextInChain = &source.chain;
    sd.label = View(info.name);
    k.shader = ws.api().wgpuDeviceCreateShaderModule(ws.device(), &sd);
  });
  if (!error.empty()) Fail("ValueError", "the WGSL of '", info.name, "' does not compile: ", error);
}

// The bind group layouts, the pipeline layout and the uniform ring.
void CreateLayouts(Workspace& ws, const FunctionInfo& info, Kernel& k) {
  const WgpuApi& api = ws.api();
  const std::vector<std::vector<WGPUBindGroupLayoutEntry>> entries = LayoutEntries(k);
  const std::string error = ws.Scoped([&] {
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
         DescribeInterface(k.wgsl, k.iface), "): ", error);
  }
}

}  // namespace

void ReleaseKernel(const WgpuApi& api, Kernel& k) {
  if (k.uniform_buffer) api.wgpuBufferRelease(k.uniform_buffer);
  if (k.layout) api.wgpuPipelineLayoutRelease(k.layout);
  for (WGPUBindGroupLayout l : k.bind_layouts) {
    if (l) api.wgpuBindGroupLayoutRelease(l);
  }
  if (k.shader) api.wgpuShaderModuleRelease(k.shader);
}

Kernel CompileKernel(Workspace& ws, const FunctionInfo& info, const std::string& wgsl) {
  CheckUtf8(info, wgsl);
  Kernel k;
  k.info = &info;
  struct Guard {
    const WgpuApi& api;
    Kernel& k;
    bool armed = true;
    ~Guard() {
      if (armed) ReleaseKernel(api, k);
    }
  } guard{ws.api(), k};

  k.wgsl = ScanWgsl(wgsl);
  const EntryPoint* entry = FindEntryPoint(info, k.wgsl);
  for (const std::string& tag : info.launch_tags) {
    if (tag == "dyn_shared_mem") k.has_dyn_shared_override = true;
  }
  if (entry != nullptr) {
    k.entry = entry->name;
    k.scan = *entry;
    CheckFixedWorkgroupSize(ws, info, *entry);
    if (k.has_dyn_shared_override) {
      bool declared = false;
      for (const std::string& o : k.wgsl.overrides) declared |= o == "dyn_shared_mem";
      k.has_dyn_shared_override = declared;
    }
  }
  k.iface = ReadInterface(k.wgsl);
  if (!k.iface.error.empty()) {
    Fail("ValueError", "the WGSL of '", info.name, "' cannot be bound: ", k.iface.error);
  }
  CheckArguments(info, k);
  for (const ArgInfo& a : info.args) k.num_buffers += a.is_buffer ? 1 : 0;
  CheckBindingLimits(ws, info, k);
  LayOutUniformSlot(ws, info, k);
  CreateShader(ws, info, wgsl, k);
  if (entry == nullptr) {
    Fail("ValueError", "the WGSL of '", info.name, "' has no @compute entry point");
  }
  CreateLayouts(ws, info, k);
  guard.armed = false;
  return k;
}

void WebGpuModule::Compile(Workspace& ws, const FunctionInfo& info) {
  auto code = payload().smap.find(info.name);
  if (code == payload().smap.end())
    Fail("ValueError", "the module has no WGSL for '", info.name, "'");
  Kernel& stored = kernels_.emplace(info.name, CompileKernel(ws, info, code->second)).first->second;
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
  auto set = [&](const std::string& name, double value) {
    names.push_back(name);
    WGPUConstantEntry c{};
    c.value = value;
    constants.push_back(c);
  };
  for (int a = 0; a < 3; ++a) {
    const std::string& o = k.scan.size[a].override_name;
    // One constant on several axes: the first axis sets it.
    if (!o.empty() && std::find(names.begin(), names.end(), o) == names.end()) {
      set(o, static_cast<double>(launch.block[a]));
    }
  }
  if (k.has_dyn_shared_override) {
    set("dyn_shared_mem", static_cast<double>(launch.dyn_shared_bytes));
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

namespace {

// The launch's workgroup size and workgroup memory against the shader and
// the adapter's limits.
void CheckLaunchShape(const Workspace& ws, const Kernel& kernel, const FunctionInfo& info,
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
}

}  // namespace

WGPUComputePipeline WebGpuModule::GetPipeline(Workspace& ws, const Kernel& kernel,
                                              const FunctionInfo& info,
                                              const LaunchConfig& launch) {
  CheckLaunchShape(ws, kernel, info, launch);
  const Key key = KeyOf(kernel, launch);
  std::lock_guard lock(mu_);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return found->second.pipeline;
  return CreatePipeline(ws, kernel, key, launch).pipeline;
}

}  // namespace webgpu
}  // namespace modrt
