// The WebGPU runtime's bind groups (webgpu_module.h): a launch's buffers
// checked against the shader's bindings, its scalars placed in the uniform
// slot, and the bind groups that bind them: a kernel's last groups are
// reused while its buffers are the same (by id, never by address).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "modrt/plugin/plugin.h"
#include "webgpu_device.h"
#include "webgpu_module.h"
#include "wgpu_native.h"
#include "wgsl_scan.h"

namespace modrt {
namespace webgpu {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// One buffer bound twice where the shader writes one binding and only reads
// the other is a usage conflict WebGPU refuses at dispatch: refused here,
// naming both. (Two writable bindings of one buffer are allowed.)
void CheckAliasing(const FunctionInfo& info, const Kernel& kernel, const LaunchArgs& args) {
  for (size_t i = 0; i < info.args.size(); ++i) {
    if (!info.args[i].is_buffer) continue;
    for (size_t j = i + 1; j < info.args.size(); ++j) {
      if (!info.args[j].is_buffer || args.buffers[i] != args.buffers[j]) continue;
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

// The entries of each bind group: the buffers, and the uniform blocks in
// `uniform_buffer` (each at its block's offset; the slot is the dynamic offset).
std::vector<std::vector<WGPUBindGroupEntry>> GroupEntries(const Kernel& kernel,
                                                          const LaunchArgs& args,
                                                          WGPUBuffer uniform_buffer) {
  std::vector<std::vector<WGPUBindGroupEntry>> entries(kernel.bind_layouts.size());
  for (size_t i = 0; i < args.buffers.size(); ++i) {
    if (args.buffers[i] == nullptr) continue;
    const Resource& r = kernel.wgsl.resources[kernel.iface.args[i].resource];
    WGPUBindGroupEntry e{};
    e.binding = r.binding;
    e.buffer = args.buffers[i]->buffer;
    e.size = args.buffers[i]->size;
    entries[r.group].push_back(e);
  }
  for (size_t u = 0; u < kernel.iface.uniforms.size(); ++u) {
    const Resource& r = kernel.wgsl.resources[kernel.iface.uniforms[u].resource];
    WGPUBindGroupEntry e{};
    e.binding = r.binding;
    e.buffer = uniform_buffer;
    e.offset = kernel.block_offsets[u];
    e.size = kernel.iface.uniforms[u].size;
    entries[r.group].push_back(e);
  }
  return entries;
}

}  // namespace

LaunchArgs BindArguments(const Kernel& kernel, const PackedArgs& k) {
  const FunctionInfo& info = *kernel.info;
  LaunchArgs args;
  args.buffers.assign(info.args.size(), nullptr);
  args.uniform.assign(kernel.uniform_size, 0);
  for (size_t i = 0; i < info.args.size(); ++i) {
    if (!info.args[i].is_buffer) {
      std::memcpy(args.uniform.data() + kernel.scalar_offsets[i], k.ptrs[i], k.sizes[i]);
      continue;
    }
    const auto* buf = static_cast<const Buffer*>(k.buffers[i]->data);
    const ShaderArg& declared = kernel.iface.args[i];
    if (buf->size < declared.min_bytes) {
      const Resource& r = kernel.wgsl.resources[declared.resource];
      Fail("ValueError", info.name, ": argument ", i, " ('", declared.name, "') holds ", buf->size,
           " bytes; the shader's ", r.name, ": ", r.type, " needs ", declared.min_bytes);
    }
    args.buffers[i] = buf;
  }
  CheckAliasing(info, kernel, args);
  for (int a = 0; a < 3; ++a) args.grid[a] = static_cast<uint32_t>(k.launch.grid[a]);
  return args;
}

std::vector<WGPUBindGroup> CreateBindGroups(Workspace& ws, const Kernel& kernel,
                                            const LaunchArgs& args, WGPUBuffer uniform_buffer) {
  const std::vector<std::vector<WGPUBindGroupEntry>> entries =
      GroupEntries(kernel, args, uniform_buffer);
  // Inside an error scope: a refused bind group is an error now, before
  // anything is recorded, never an invalid batch for the queue.
  std::vector<WGPUBindGroup> groups;
  const std::string error = ws.Scoped([&] {
    for (size_t g = 0; g < entries.size(); ++g) {
      WGPUBindGroupDescriptor bd{};
      bd.layout = kernel.bind_layouts[g];
      bd.entryCount = entries[g].size();
      bd.entries = entries[g].data();
      groups.push_back(ws.api().wgpuDeviceCreateBindGroup(ws.device(), &bd));
    }
  });
  if (!error.empty()) {
    ReleaseBindGroups(ws.api(), groups);
    Fail("ValueError", kernel.info->name, ": WebGPU refused its bindings (",
         DescribeInterface(kernel.wgsl, kernel.iface), "): ", error);
  }
  return groups;
}

void ReleaseBindGroups(const WgpuApi& api, std::vector<WGPUBindGroup>& groups) {
  for (WGPUBindGroup g : groups) {
    if (g) api.wgpuBindGroupRelease(g);
  }
  groups.clear();
}

const std::vector<WGPUBindGroup>& CachedBindGroups(Workspace& ws, const Kernel& kernel,
                                                   const LaunchArgs& args,
                                                   WGPUBuffer uniform_buffer, LaunchCache& cache) {
  std::vector<uint64_t> ids;
  ids.reserve(kernel.num_buffers);
  for (const Buffer* b : args.buffers) {
    if (b != nullptr) ids.push_back(b->id);
  }
  if (!cache.groups.empty() && cache.buffer_ids == ids && cache.groups_uniform == uniform_buffer)
    return cache.groups;
  // The old groups stay alive (in wgpu) for the launches recorded with them.
  ReleaseBindGroups(ws.api(), cache.groups);
  cache.buffer_ids.clear();
  cache.groups = CreateBindGroups(ws, kernel, args, uniform_buffer);
  cache.buffer_ids = std::move(ids);
  cache.groups_uniform = uniform_buffer;
  return cache.groups;
}

}  // namespace webgpu
}  // namespace modrt
