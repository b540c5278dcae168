#include "vulkan_module.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "modrt/launch_limits.h"
#include "spirv_scan.h"
#include "vulkan_api.h"
#include "vulkan_device.h"

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

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

// Where each argument of a function goes, read from its shader: the i-th
// buffer argument binds the i-th buffer binding in (set, binding) order; the
// j-th scalar argument fills the j-th member of the push-constant block.
struct ArgLayout {
  struct Bound {
    uint32_t set;
    uint32_t binding;
    VkDescriptorType type;
  };
  std::vector<Bound> buffers;     // per buffer argument
  std::vector<uint32_t> offsets;  // per argument: push-constant offset (scalars only)
  uint32_t push_size = 0;
  uint32_t set_count = 0;  // descriptor sets of the pipeline layout: 0 .. highest set
  uint32_t storage_count = 0, uniform_count = 0;
};

ArgLayout LayoutArguments(const FunctionInfo& info, const ShaderInfo& shader) {
  ArgLayout layout;
  layout.offsets.assign(info.args.size(), 0);
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
      continue;
    }
    const SpirvPushMember& m = shader.push[scalar++];
    if (m.dtype != DTypeName(a.dtype)) {
      Fail("ValueError", info.name, ": argument ", i, " is ", DTypeName(a.dtype),
           ", but push constant ", m.name.empty() ? "" : StrCat("'", m.name, "' "), "(offset ",
           m.offset, ") is ", m.type);
    }
    layout.offsets[i] = m.offset;
  }
  layout.push_size = shader.push_size;
  return layout;
}

// The specialization constant that dyn_shared_mem sets (bytes).
constexpr uint32_t kDynSharedSpecId = 3;

// One compute pipeline: a function specialised for one workgroup size and
// dynamic shared memory size on one device.
struct Pipeline {
  VkShaderModule shader = VK_NULL_HANDLE;
  std::vector<VkDescriptorSetLayout> set_layouts;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  ArgLayout args;
};

class VulkanModule final : public PayloadModule {
 public:
  explicit VulkanModule(Payload payload) : PayloadModule(std::move(payload)) {}
  ~VulkanModule() override {
    std::lock_guard lock(mu_);
    if (pipelines_.empty()) return;
    Workspace& ws = Workspace::Get();
    std::vector<bool> drained(ws.count(), false);
    for (auto& [key, p] : pipelines_) {
      Device& d = ws.device(std::get<0>(key));
      if (!drained[std::get<0>(key)]) {
        drained[std::get<0>(key)] = true;
        try {
          ws.DrainAndInvalidate(d);  // launches in flight still use the pipelines
        } catch (const Error&) {
          // A lost device cannot use them either.
        }
      }
      Destroy(d, *p);
    }
  }

  ObjectRef GetFunction(const std::string& name) override {
    return LaunchingFunction(
        name, [this](const FunctionInfo& info, size_t, const Args& args) { Launch(info, args); });
  }

  int64_t pipelines_created() const { return pipelines_created_.load(); }

 private:
  // (device, function, block x, y, z, dynamic shared bytes)
  using Key = std::tuple<int, std::string, int64_t, int64_t, int64_t, int64_t>;

  void Launch(const FunctionInfo& info, const Args& args) {
    KernelArgs k = KernelArgs::Pack(info, args, kDLVulkan);
    const int device_id = k.device_id;
    Workspace& ws = Workspace::Get();
    const VkApi& vk = ws.vk();
    Device& d = ws.device(device_id);
    const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
    for (int a = 0; a < 3; ++a) {
      if (k.launch.grid[a] > limits.maxComputeWorkGroupCount[a]) {
        Fail("ValueError", LaunchLimitExceeded(info.name, StrCat("blockIdx.", "xyz"[a]),
                                               k.launch.grid[a], limits.maxComputeWorkGroupCount[a],
                                               StrCat("maxComputeWorkGroupCount[", a, "]"),
                                               d.caps.props.deviceName));
      }
    }
    const Pipeline& p = GetPipeline(device_id, d, info, k.launch);
    const ArgLayout& layout = p.args;
    std::vector<uint8_t> constants(layout.push_size, 0);
    std::vector<VkDescriptorBufferInfo> buffers;
    for (size_t i = 0; i < info.args.size(); ++i) {
      if (info.args[i].is_buffer) {
        buffers.push_back(
            {static_cast<const Buffer*>(k.buffers[i]->data)->buffer, 0, VK_WHOLE_SIZE});
      } else {
        std::memcpy(constants.data() + layout.offsets[i], k.ptrs[i], k.sizes[i]);
      }
    }

    std::lock_guard lock(*d.mu);
    ws.Retire(d, /*wait=*/false);
    Slot s = ws.AcquireSlot(d);
    // Back to the free list on any failure below; handed to in_flight on success.
    struct Cleanup {
      Workspace& ws;
      Device& d;
      Slot& s;
      bool armed = true;
      ~Cleanup() {
        if (armed) ws.ReleaseUnsubmitted(d, s);
      }
    } cleanup{ws, d, s};
    if (s.generation != d.generation) {
      s.sets.clear();
      s.recorded = false;
      s.generation = d.generation;
    }

    // The descriptor sets: kept when the slot's sets already bind these
    // buffers for this layout, else the pool is reset (grown if need be) and
    // the sets written.
    bool rewritten = false;
    if (!buffers.empty()) {
      const bool same =
          !s.sets.empty() && s.sets_layout == p.layout && s.bound.size() == buffers.size() &&
          std::equal(buffers.begin(), buffers.end(), s.bound.begin(),
                     [](const VkDescriptorBufferInfo& b, VkBuffer v) { return b.buffer == v; });
      if (!same) {
        rewritten = true;
        s.sets.clear();
        s.recorded = false;
        const uint32_t wanted = std::max(layout.storage_count, layout.uniform_count);
        if (s.descriptor_capacity < wanted || s.set_capacity < layout.set_count) {
          if (s.descriptors) vk.vkDestroyDescriptorPool(d.device, s.descriptors, nullptr);
          s.descriptors = VK_NULL_HANDLE;
          s.descriptor_capacity = s.set_capacity = 0;
          const uint32_t capacity = std::max<uint32_t>(wanted, 8);
          const uint32_t set_capacity = std::max<uint32_t>(layout.set_count, 4);
          VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, capacity},
                                          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, capacity}};
          auto pool =
              Make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
          pool.maxSets = set_capacity;
          pool.poolSizeCount = 2;
          pool.pPoolSizes = sizes;
          MODRT_VK_CHECK(vk.vkCreateDescriptorPool(d.device, &pool, nullptr, &s.descriptors),
                         "creating a descriptor pool");
          s.descriptor_capacity = capacity;
          s.set_capacity = set_capacity;
        } else {
          MODRT_VK_CHECK(vk.vkResetDescriptorPool(d.device, s.descriptors, 0),
                         "resetting a descriptor pool");
        }
        auto alloc =
            Make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
        alloc.descriptorPool = s.descriptors;
        alloc.descriptorSetCount = layout.set_count;
        alloc.pSetLayouts = p.set_layouts.data();
        std::vector<VkDescriptorSet> sets(layout.set_count, VK_NULL_HANDLE);
        MODRT_VK_CHECK(vk.vkAllocateDescriptorSets(d.device, &alloc, sets.data()),
                       "allocating descriptor sets");
        std::vector<VkWriteDescriptorSet> writes(buffers.size());
        for (size_t b = 0; b < buffers.size(); ++b) {
          writes[b] = Make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
          writes[b].dstSet = sets[layout.buffers[b].set];
          writes[b].dstBinding = layout.buffers[b].binding;
          writes[b].descriptorCount = 1;
          writes[b].descriptorType = layout.buffers[b].type;
          writes[b].pBufferInfo = &buffers[b];
        }
        vk.vkUpdateDescriptorSets(d.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                                  nullptr);
        s.sets = std::move(sets);
        s.sets_layout = p.layout;
        s.bound.clear();
        for (const auto& b : buffers) s.bound.push_back(b.buffer);
      }
    }
    const std::vector<VkDescriptorSet> no_sets;
    const std::vector<VkDescriptorSet>& sets = buffers.empty() ? no_sets : s.sets;

    // The recording: re-submitted as it is when the slot last recorded this
    // very dispatch (pipeline, bindings, push constants, grid).
    const std::array<uint32_t, 3> grid{static_cast<uint32_t>(k.launch.grid[0]),
                                       static_cast<uint32_t>(k.launch.grid[1]),
                                       static_cast<uint32_t>(k.launch.grid[2])};
    const bool replay = s.recorded && !rewritten && s.pipeline == p.pipeline &&
                        s.recorded_sets == sets && s.grid == grid && s.constants == constants;
    if (!replay) {
      s.recorded = false;
      // Begin resets the buffer (the pool allows it); no ONE_TIME_SUBMIT: it may be replayed.
      auto begin = Make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
      MODRT_VK_CHECK(vk.vkBeginCommandBuffer(s.cmd, &begin), "recording a launch");
      // Kernels run in submission order, like a stream: each waits for the
      // writes of the ones before it.
      auto before = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      before.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vk.vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, nullptr, 0,
                              nullptr);
      vk.vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
      if (!sets.empty()) {
        vk.vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0,
                                   static_cast<uint32_t>(sets.size()), sets.data(), 0, nullptr);
      }
      if (layout.push_size > 0) {
        vk.vkCmdPushConstants(s.cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, layout.push_size,
                              constants.data());
      }
      vk.vkCmdDispatch(s.cmd, grid[0], grid[1], grid[2]);
      // Host reads after the fence see the kernel's writes.
      auto after = Make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vk.vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, nullptr, 0, nullptr);
      MODRT_VK_CHECK(vk.vkEndCommandBuffer(s.cmd), "recording a launch");
      s.recorded = true;
      s.pipeline = p.pipeline;
      s.recorded_sets = sets;
      s.grid = grid;
      s.constants = constants;
    }
    auto submit = Make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &s.cmd;
    VkResult r = vk.vkQueueSubmit(d.queue, 1, &submit, s.fence);
    if (r != VK_SUCCESS) {
      // The fence's state is unknown after a failed submit: do not recycle it.
      cleanup.armed = false;
      ws.DestroySlot(d, s);
      MODRT_VK_CHECK(r, StrCat("launch of ", info.name));
    }
    d.in_flight.push_back(std::move(s));
    cleanup.armed = false;
  }

  // The pipeline for this launch shape, created on first use. Creation is
  // under the module's lock, so concurrent first launches create it once.
  const Pipeline& GetPipeline(int device_id, Device& d, const FunctionInfo& info,
                              const LaunchConfig& launch) {
    bool has_dyn_shared = false;
    std::array<bool, 3> has_block{};
    for (const auto& tag : info.launch_tags) {
      has_dyn_shared |= tag == "dyn_shared_mem";
      if (tag.rfind("threadIdx.", 0) == 0) has_block[tag.back() - 'x'] = true;
    }
    Key key{device_id,       info.name,       launch.block[0],
            launch.block[1], launch.block[2], launch.dyn_shared_bytes};
    std::lock_guard lock(mu_);
    auto found = pipelines_.find(key);
    if (found != pipelines_.end()) return *found->second;

    const std::string& code = payload().smap.at(info.name);
    ShaderInfo shader;
    try {
      shader = ScanSpirv(info.name, code);
    } catch (const SpirvError& e) {
      Fail("ValueError", e.what());
    }
    const VkPhysicalDeviceLimits& limits = d.caps.props.limits;
    std::array<uint32_t, 3> block = shader.size;  // the workgroup size this pipeline runs
    for (int a = 0; a < 3; ++a) {
      const char axis = "xyz"[a];
      if (has_block[a] && shader.size_spec_id[a] < 0 && launch.block[a] != shader.size[a]) {
        Fail("ValueError", info.name, ": its shader fixes the workgroup size at (", shader.size[0],
             ", ", shader.size[1], ", ", shader.size[2], "), but threadIdx.", axis, " = ",
             launch.block[a], "; declare layout(local_size_", axis, "_id = ", a,
             ") to set it at launch");
      }
      if (has_block[a]) block[a] = static_cast<uint32_t>(launch.block[a]);
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
    auto p = std::make_unique<Pipeline>();
    p->args = LayoutArguments(info, shader);
    const ArgLayout& args = p->args;
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

    const VkApi& vk = Workspace::Get().vk();
    try {
      auto module = Make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
      module.codeSize = code.size();
      module.pCode = reinterpret_cast<const uint32_t*>(code.data());
      MODRT_VK_CHECK(vk.vkCreateShaderModule(d.device, &module, nullptr, &p->shader),
                     StrCat("loading the SPIR-V of ", info.name));
      // One layout per set number up to the highest the shader uses; a set
      // number it skips gets an empty one.
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
        auto set = Make<VkDescriptorSetLayoutCreateInfo>(
            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
        set.bindingCount = static_cast<uint32_t>(set_bindings.size());
        set.pBindings = set_bindings.data();
        p->set_layouts.push_back(VK_NULL_HANDLE);
        MODRT_VK_CHECK(
            vk.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &p->set_layouts.back()),
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

      // The workgroup size through the specialization constants that set it
      // (whatever their ids), and dyn_shared_mem through constant 3.
      std::vector<VkSpecializationMapEntry> entries;
      std::vector<uint32_t> values;
      auto specialise = [&](uint32_t id, uint32_t value) {
        entries.push_back({id, static_cast<uint32_t>(values.size() * 4), 4});
        values.push_back(value);
      };
      for (int a = 0; a < 3; ++a) {
        if (has_block[a] && shader.size_spec_id[a] >= 0) {
          specialise(static_cast<uint32_t>(shader.size_spec_id[a]), block[a]);
        }
      }
      if (has_dyn_shared && shader.spec_constant(kDynSharedSpecId) != nullptr) {
        specialise(kDynSharedSpecId, static_cast<uint32_t>(launch.dyn_shared_bytes));
      }
      VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(),
                                values.size() * 4, values.data()};
      auto create =
          Make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
      create.stage = Make<VkPipelineShaderStageCreateInfo>(
          VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
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
    } catch (...) {
      Destroy(d, *p);
      throw;
    }
    pipelines_created_.fetch_add(1);
    return *pipelines_.emplace(std::move(key), std::move(p)).first->second;
  }

  static void Destroy(const Device& d, const Pipeline& p) {
    const VkApi& vk = Workspace::Get().vk();
    if (p.pipeline) vk.vkDestroyPipeline(d.device, p.pipeline, nullptr);
    if (p.layout) vk.vkDestroyPipelineLayout(d.device, p.layout, nullptr);
    for (VkDescriptorSetLayout set : p.set_layouts) {
      if (set) vk.vkDestroyDescriptorSetLayout(d.device, set, nullptr);
    }
    if (p.shader) vk.vkDestroyShaderModule(d.device, p.shader, nullptr);
  }

  std::mutex mu_;
  std::map<Key, std::unique_ptr<Pipeline>> pipelines_;
  std::atomic<int64_t> pipelines_created_{0};
};

}  // namespace

std::unique_ptr<PayloadModule> NewVulkanModule(Payload payload) {
  return std::make_unique<VulkanModule>(std::move(payload));
}

void PipelinesCreated(const Args& args, Ret* ret) {
  args.ExpectCount(1, "vulkan.pipelines_created");
  ModrtObjectHandle handle = args.Obj(0, kModrtObjModule, "module");
  auto* module = ModuleAs<VulkanModule>(handle);
  if (module == nullptr) {
    auto ask = [&](const char* what, OwnedValue* out) {
      ModrtValue arg{};
      arg.type_code = kModrtObject;
      arg.v_obj = handle;
      CallFunction(GetGlobal(what), &arg, 1, out);
    };
    OwnedValue kind, fallback;
    ask("module.kind", &kind);
    ask("module.is_fallback", &fallback);
    Fail("TypeError", "vulkan.pipelines_created takes a real vulkan module, got a ",
         Args(&fallback.value(), 1).Int(0) ? "fallback " : "", Args(&kind.value(), 1).Str(0),
         " module");
  }
  ret->SetInt(module->pipelines_created());
}

}  // namespace vulkan
}  // namespace modrt
