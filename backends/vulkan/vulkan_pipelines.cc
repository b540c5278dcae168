#include "vulkan_pipelines.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "backends/webgpu/wgsl_scan.h"
#include "modrt/plugin/launch_limits.h"
#include "spirv_scan.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// The specialization constant that dyn_shared_mem sets (bytes).
constexpr uint32_t kDynSharedSpecId = 3;

// "float32", "int8", ...: as spirv_scan.h spells a SPIR-V scalar type.
std::string DTypeName(DLDataType t) {
  const char* code = t.code == kDLInt     ? "int"
                     : t.code == kDLUInt  ? "uint"
                     : t.code == kDLFloat ? "float"
                                          : "?";
  std::string name = StrCat(code, static_cast<int>(t.bits));
  if (t.lanes != 1) name += StrCat("x", static_cast<int>(t.lanes));
  return name;
}

// ValueError unless the shader binds only buffers, as many as the signature's
// buffer arguments, and has as many push constants as its scalar arguments.
void CheckArgumentCounts(const FunctionInfo& info, const ShaderInfo& shader) {
  size_t buffer_args = 0, scalar_args = 0;
  for (const ArgInfo& a : info.args) (a.is_buffer ? buffer_args : scalar_args)++;
  std::string bound;
  for (const SpirvBinding& b : shader.bindings) {
    bound += StrCat(bound.empty() ? "" : ", ", "set ", b.set, " binding ", b.binding);
    if (b.kind == SpirvBinding::Kind::kOther) {
      Fail("ValueError", info.name, ": its shader binds ", b.what, " at set ", b.set, " binding ",
           b.binding, "; modrt binds storage buffers and uniform blocks only");
    }
  }
  if (buffer_args != shader.bindings.size()) {
    Fail("ValueError", info.name, ": its signature has ", buffer_args,
         " buffer arguments, but its shader binds ", shader.bindings.size(), " buffers",
         bound.empty() ? "" : StrCat(" (", bound, ")"));
  }
  if (scalar_args != shader.push.size()) {
    Fail("ValueError", info.name, ": its signature has ", scalar_args,
         " scalar arguments, but its shader's push-constant block has ", shader.push.size(),
         " members");
  }
}

ArgLayout LayoutArguments(const FunctionInfo& info, const ShaderInfo& shader) {
  CheckArgumentCounts(info, shader);
  ArgLayout layout;
  layout.args.resize(info.args.size());
  size_t buffer = 0, scalar = 0;
  for (size_t i = 0; i < info.args.size(); ++i) {
    const ArgInfo& a = info.args[i];
    if (a.is_buffer) {
      const SpirvBinding& b = shader.bindings[buffer++];
      const bool uniform = b.kind == SpirvBinding::Kind::kUniformBuffer;
      layout.buffers.push_back(
          {b.set, b.binding,
           uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER});
      (uniform ? layout.uniform_count : layout.storage_count)++;
      layout.set_count = std::max(layout.set_count, b.set + 1);
      layout.args[i].place = ArgLayout::Place::kBuffer;
      continue;
    }
    const SpirvPushMember& m = shader.push[scalar++];
    if (m.dtype != DTypeName(a.dtype)) {
      Fail("ValueError", info.name, ": argument ", i, " is ", DTypeName(a.dtype),
           ", but push constant ", m.name.empty() ? "" : StrCat("'", m.name, "' "), "(offset ",
           m.offset, ") is ", m.type);
    }
    layout.args[i] = {ArgLayout::Place::kPush, m.offset};
  }
  layout.tensor_bindings = static_cast<uint32_t>(layout.buffers.size());
  layout.push_size = shader.push_size;
  return layout;
}

// The layout of a shader compiled from WGSL, read from the WGSL it carries
// with the WebGPU runtime's own reader (wgsl_scan.h): the arguments are the
// WGSL's resources in (group, binding) order, as modrt.compile inferred them.
ArgLayout LayoutWgslArguments(const FunctionInfo& info, const ShaderInfo& shader, const Device& d) {
  const webgpu::WgslInfo wgsl = webgpu::ScanWgsl(shader.source);
  const webgpu::Interface iface = webgpu::ReadInterface(wgsl);
  if (!iface.error.empty()) {
    Fail("ValueError", info.name, ": its WGSL cannot be bound: ", iface.error);
  }
  if (iface.args.size() != info.args.size()) {
    Fail("ValueError", info.name, ": its signature has ", info.args.size(),
         " arguments, but its WGSL declares ", iface.args.size(), ": ",
         webgpu::DescribeInterface(wgsl, iface));
  }
  if (!shader.push.empty()) {
    Fail("ValueError", info.name, ": its SPIR-V has push constants, which its WGSL cannot declare");
  }
  std::map<std::pair<uint32_t, uint32_t>, const SpirvBinding*> spirv;
  for (const SpirvBinding& b : shader.bindings) spirv[{b.set, b.binding}] = &b;
  auto bound = [&](size_t resource) -> const SpirvBinding* {
    const webgpu::Resource& r = wgsl.resources[resource];
    auto found = spirv.find({r.group, r.binding});
    if (found == spirv.end()) return nullptr;
    const SpirvBinding* b = found->second;
    spirv.erase(found);
    return b;
  };
  ArgLayout layout;
  layout.args.resize(info.args.size());
  auto add = [&](const SpirvBinding& b, VkDescriptorType type, uint32_t offset, uint32_t size) {
    layout.buffers.push_back({b.set, b.binding, type, offset, size});
    (type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER ? layout.uniform_count : layout.storage_count)++;
    layout.set_count = std::max(layout.set_count, b.set + 1);
  };
  for (size_t i = 0; i < info.args.size(); ++i) {
    const webgpu::ShaderArg& a = iface.args[i];
    const std::string given = DTypeName(info.args[i].dtype);
    if (info.args[i].is_buffer != a.is_buffer) {
      Fail("ValueError", info.name, ": argument ", i, " ('", a.name, "') is a ",
           info.args[i].is_buffer ? "buffer" : "scalar",
           " in its signature, but its WGSL declares ",
           a.is_buffer ? "a storage buffer" : "a uniform scalar");
    }
    if (a.is_buffer ? !webgpu::BufferDtypeFits(given, a) : given != a.dtype) {
      Fail("ValueError", info.name, ": argument ", i, " ('", a.name, "') is ", given,
           " in its signature, but its WGSL declares ", a.wgsl_type);
    }
    if (!a.is_buffer) continue;
    if (const SpirvBinding* b = bound(a.resource)) {
      add(*b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 0, 0);
      layout.args[i].place = ArgLayout::Place::kBuffer;
    }
  }
  layout.tensor_bindings = static_cast<uint32_t>(layout.buffers.size());
  // Each uniform the SPIR-V still binds is a range of the launch's uniform
  // data, at an offset a uniform buffer binding may start at.
  const uint32_t align = static_cast<uint32_t>(
      std::max<VkDeviceSize>(16, d.caps.props.limits.minUniformBufferOffsetAlignment));
  std::map<size_t, uint32_t> block_offset;  // by WGSL resource
  for (const webgpu::UniformBlock& u : iface.uniforms) {
    const SpirvBinding* b = bound(u.resource);
    if (b == nullptr) continue;
    const uint32_t size = (u.size + 15) / 16 * 16;  // tint's block: an array of vec4<u32>
    block_offset[u.resource] = layout.uniform_bytes;
    add(*b, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, layout.uniform_bytes, size);
    layout.uniform_bytes = (layout.uniform_bytes + size + align - 1) / align * align;
  }
  for (size_t i = 0; i < info.args.size(); ++i) {
    const webgpu::ShaderArg& a = iface.args[i];
    auto block = block_offset.find(a.resource);
    if (!a.is_buffer && block != block_offset.end()) {
      layout.args[i] = {ArgLayout::Place::kUniform, block->second + a.offset};
    }
  }
  if (!spirv.empty()) {
    const SpirvBinding& b = *spirv.begin()->second;
    Fail("ValueError", info.name, ": its SPIR-V binds set ", b.set, " binding ", b.binding,
         ", which its WGSL does not declare: ", webgpu::DescribeInterface(wgsl, iface));
  }
  return layout;
}

// Which launch parameters the function takes.
struct LaunchTags {
  std::array<bool, 3> block{};  // threadIdx.x, y, z
  bool dyn_shared = false;
};

LaunchTags TagsOf(const FunctionInfo& info) {
  LaunchTags tags;
  for (const auto& tag : info.launch_tags) {
    tags.dyn_shared |= tag == "dyn_shared_mem";
    if (tag.rfind("threadIdx.", 0) == 0) tags.block[tag.back() - 'x'] = true;
  }
  return tags;
}

// The workgroup size the pipeline runs: the launch's where it sets it, the
// shader's elsewhere; ValueError when it is over the device's limits, or
// when the launch sets a size the shader fixes otherwise.
std::array<uint32_t, 3> WorkgroupSize(const FunctionInfo& info, const LaunchTags& tags,
                                      const LaunchConfig& launch, const ShaderInfo& shader,
                                      const Device& d) {
  const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
  std::array<uint32_t, 3> block = shader.size;
  for (int a = 0; a < 3; ++a) {
    const char axis = "xyz"[a];
    if (tags.block[a] && shader.size_spec_id[a] < 0 && launch.block[a] != shader.size[a] &&
        shader.from_wgsl()) {
      Fail("ValueError", info.name, ": its WGSL workgroup size compiled for Vulkan is (",
           shader.size[0], ", ", shader.size[1], ", ", shader.size[2], "), but threadIdx.", axis,
           " = ", launch.block[a],
           ": tint fixes override constants at their defaults, so on vulkan a WGSL kernel runs "
           "its default workgroup size only (webgpu sets it at launch)");
    }
    if (tags.block[a] && shader.size_spec_id[a] < 0 && launch.block[a] != shader.size[a]) {
      Fail("ValueError", info.name, ": its shader fixes the workgroup size at (", shader.size[0],
           ", ", shader.size[1], ", ", shader.size[2], "), but threadIdx.", axis, " = ",
           launch.block[a], "; declare layout(local_size_", axis, "_id = ", a,
           ") to set it at launch");
    }
    if (tags.block[a]) block[a] = static_cast<uint32_t>(launch.block[a]);
    if (block[a] > limits.maxComputeWorkGroupSize[a]) {
      Fail("ValueError", LaunchLimitExceeded(info.name, StrCat("threadIdx.", axis), block[a],
                                             limits.maxComputeWorkGroupSize[a],
                                             StrCat("maxComputeWorkGroupSize[", a, "]"),
                                             d.caps.props.deviceName));
    }
  }
  const int64_t threads = int64_t{block[0]} * block[1] * block[2];
  if (threads > limits.maxComputeWorkGroupInvocations) {
    Fail("ValueError",
         LaunchLimitExceeded(info.name, "threads per block", threads,
                             limits.maxComputeWorkGroupInvocations,
                             "maxComputeWorkGroupInvocations", d.caps.props.deviceName));
  }
  if (launch.dyn_shared_bytes > limits.maxComputeSharedMemorySize) {
    Fail("ValueError", info.name, ": ", launch.dyn_shared_bytes,
         " bytes of shared memory exceed the device's limit of ",
         limits.maxComputeSharedMemorySize);
  }
  return block;
}

// ValueError when the function's arguments need more than the device binds.
void CheckArgumentLimits(const FunctionInfo& info, const ArgLayout& args, const Device& d) {
  const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
  if (args.push_size > limits.maxPushConstantsSize) {
    Fail("ValueError", info.name, ": its scalar arguments take ", args.push_size,
         " bytes of push constants; the device allows ", limits.maxPushConstantsSize);
  }
  if (args.storage_count > limits.maxPerStageDescriptorStorageBuffers) {
    Fail("ValueError", info.name, " takes ", args.storage_count,
         " storage buffers; the device allows ", limits.maxPerStageDescriptorStorageBuffers);
  }
  if (args.uniform_count > limits.maxPerStageDescriptorUniformBuffers) {
    Fail("ValueError", info.name, " takes ", args.uniform_count,
         " uniform blocks; the device allows ", limits.maxPerStageDescriptorUniformBuffers);
  }
  if (args.set_count > limits.maxBoundDescriptorSets) {
    Fail("ValueError", info.name, ": its shader uses descriptor sets 0 to ", args.set_count - 1,
         "; the device allows ", limits.maxBoundDescriptorSets);
  }
}

// The shader module, one descriptor set layout per set number up to the
// highest the shader uses (a set number it skips gets an empty one), and the
// pipeline layout.
void CreateLayouts(const VkApi& vk, const Device& d, const FunctionInfo& info,
                   const std::string& spirv, Pipeline* p) {
  auto module = Make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  module.codeSize = spirv.size();
  module.pCode = reinterpret_cast<const uint32_t*>(spirv.data());
  MODRT_VK_CHECK(vk.vkCreateShaderModule(d.device, &module, nullptr, &p->shader),
                 StrCat("loading the SPIR-V of ", info.name));
  const ArgLayout& args = p->args;
  std::vector<std::vector<VkDescriptorSetLayoutBinding>> bindings(args.set_count);
  for (const ArgLayout::Bound& b : args.buffers) {
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = b.binding;
    binding.descriptorType = b.type;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings[b.set].push_back(binding);
  }
  for (const auto& set_bindings : bindings) {
    auto set =
        Make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set.bindingCount = static_cast<uint32_t>(set_bindings.size());
    set.pBindings = set_bindings.data();
    p->set_layouts.push_back(VK_NULL_HANDLE);
    MODRT_VK_CHECK(vk.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &p->set_layouts.back()),
                   "creating a descriptor set layout");
  }
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, args.push_size};
  auto layout = Make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layout.setLayoutCount = static_cast<uint32_t>(p->set_layouts.size());
  layout.pSetLayouts = p->set_layouts.data();
  layout.pushConstantRangeCount = args.push_size > 0 ? 1 : 0;
  layout.pPushConstantRanges = &range;
  MODRT_VK_CHECK(vk.vkCreatePipelineLayout(d.device, &layout, nullptr, &p->layout),
                 "creating a pipeline layout");
}

// The compute pipeline, with the workgroup size set through the
// specialization constants that set it (whatever their ids), and
// dyn_shared_mem through constant 3.
void CreateComputePipeline(const VkApi& vk, const Device& d, const FunctionInfo& info,
                           const ShaderInfo& shader, const LaunchTags& tags,
                           const std::array<uint32_t, 3>& block, int64_t dyn_shared_bytes,
                           Pipeline* p) {
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  auto specialise = [&](uint32_t id, uint32_t value) {
    entries.push_back({id, static_cast<uint32_t>(values.size() * 4), 4});
    values.push_back(value);
  };
  for (int a = 0; a < 3; ++a) {
    if (tags.block[a] && shader.size_spec_id[a] >= 0) {
      specialise(static_cast<uint32_t>(shader.size_spec_id[a]), block[a]);
    }
  }
  if (tags.dyn_shared && shader.spec_constant(kDynSharedSpecId) != nullptr) {
    specialise(kDynSharedSpecId, static_cast<uint32_t>(dyn_shared_bytes));
  }
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(),
                            values.size() * 4, values.data()};
  auto create = Make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  create.stage =
      Make<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  create.stage.module = p->shader;
  create.stage.pName = shader.entry.c_str();
  create.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  create.layout = p->layout;
  VkResult r =
      vk.vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &create, nullptr, &p->pipeline);
  if (r != VK_SUCCESS) {
    Fail("RuntimeError", "Vulkan could not create the compute pipeline of ", info.name, " on ",
         d.caps.props.deviceName, " (", VkResultName(r),
         "); is its SPIR-V a valid compute shader for this device?");
  }
}

void Destroy(const VkApi& vk, const Device& d, const Pipeline& p) {
  if (p.pipeline) vk.vkDestroyPipeline(d.device, p.pipeline, nullptr);
  if (p.layout) vk.vkDestroyPipelineLayout(d.device, p.layout, nullptr);
  for (VkDescriptorSetLayout set : p.set_layouts) {
    if (set) vk.vkDestroyDescriptorSetLayout(d.device, set, nullptr);
  }
  if (p.shader) vk.vkDestroyShaderModule(d.device, p.shader, nullptr);
}

}  // namespace

PipelineCache::~PipelineCache() {
  std::lock_guard lock(mu_);
  if (pipelines_.empty()) return;
  Workspace& ws = Workspace::Get();
  std::vector<bool> drained(ws.count(), false);
  for (auto& [key, p] : pipelines_) {
    const int device_id = std::get<0>(key);
    Device& d = ws.device(device_id);
    if (!drained[device_id]) {
      drained[device_id] = true;
      try {
        ws.DrainAndInvalidate(d);  // launches in flight still use the pipelines
      } catch (const Error&) {
        // A lost device cannot use them either.
      }
    }
    Destroy(ws.vk(), d, *p);
  }
}

const Pipeline& PipelineCache::Get(int device_id, Device& d, const FunctionInfo& info,
                                   const LaunchConfig& launch, const std::string& spirv) {
  Key key{device_id,       info.name,       launch.block[0],
          launch.block[1], launch.block[2], launch.dyn_shared_bytes};
  std::lock_guard lock(mu_);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return *found->second;

  ShaderInfo shader;
  try {
    shader = ScanSpirv(info.name, spirv);
  } catch (const SpirvError& e) {
    Fail("ValueError", e.what());
  }
  const LaunchTags tags = TagsOf(info);
  const std::array<uint32_t, 3> block = WorkgroupSize(info, tags, launch, shader, d);
  auto p = std::make_unique<Pipeline>();
  if (shader.from_wgsl() && tags.dyn_shared && launch.dyn_shared_bytes != 0) {
    Fail("ValueError", info.name, ": dyn_shared_mem = ", launch.dyn_shared_bytes,
         ", but its WGSL compiled for Vulkan sizes workgroup memory at the dyn_shared_mem "
         "override's default (tint fixes override constants); pass 0 on vulkan (webgpu sets it "
         "at launch)");
  }
  p->args =
      shader.from_wgsl() ? LayoutWgslArguments(info, shader, d) : LayoutArguments(info, shader);
  CheckArgumentLimits(info, p->args, d);
  const VkApi& vk = Workspace::Get().vk();
  try {
    CreateLayouts(vk, d, info, spirv, p.get());
    CreateComputePipeline(vk, d, info, shader, tags, block, launch.dyn_shared_bytes, p.get());
  } catch (...) {
    Destroy(vk, d, *p);
    throw;
  }
  created_.fetch_add(1);
  return *pipelines_.emplace(std::move(key), std::move(p)).first->second;
}

}  // namespace vulkan
}  // namespace modrt
