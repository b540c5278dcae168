// The Vulkan dispatch floor: the add_one compute shader of the vulkan-dispatch
// row (SPIR-V from argv[3]) on 64 floats, its command buffer recorded once,
// then per dispatch vkQueueSubmit with a fence, vkWaitForFences and
// vkResetFences: one small synchronous dispatch with nothing in between.
// With argv[4] = D (the vulkan-graph row), the command buffer holds D
// dispatches, each after a compute-to-compute barrier (they all write the same
// buffer), and each submission runs all D; the figure is per dispatch.
// Picks the first CPU device (lavapipe) if there is one, else device 0.
#include <string.h>
#include <vulkan/vulkan.h>

#include "floor_common.h"

#define CHECK(call)                              \
  do {                                           \
    VkResult r_ = (call);                        \
    if (r_ != VK_SUCCESS) floor_fail(#call, r_); \
  } while (0)

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) floor_fail("opening the SPIR-V file", 0);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)len);
  if (fread(data, 1, (size_t)len, f) != (size_t)len) floor_fail("reading the SPIR-V file", 0);
  fclose(f);
  *size = (size_t)len;
  return data;
}

int main(int argc, char** argv) {
  long n;
  int batches;
  floor_args(argc, argv, &n, &batches);
  if (argc < 4) floor_fail("no SPIR-V path given", 0);
  const long dispatches = argc > 4 ? atol(argv[4]) : 1;
  if (dispatches <= 0) floor_fail("dispatches per command buffer must be positive", dispatches);
  size_t code_size;
  char* code = read_file(argv[3], &code_size);

  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance instance;
  if (vkCreateInstance(&ici, NULL, &instance) != VK_SUCCESS)
    floor_unavailable("vkCreateInstance failed");
  uint32_t ndev = 0;
  vkEnumeratePhysicalDevices(instance, &ndev, NULL);
  if (ndev == 0) floor_unavailable("no Vulkan device");
  VkPhysicalDevice phys[16];
  if (ndev > 16) ndev = 16;
  vkEnumeratePhysicalDevices(instance, &ndev, phys);
  VkPhysicalDevice pd = phys[0];
  for (uint32_t i = 0; i < ndev; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(phys[i], &p);
    if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
      pd = phys[i];
      break;
    }
  }
  uint32_t nfam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, NULL);
  VkQueueFamilyProperties fams[16];
  if (nfam > 16) nfam = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, fams);
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nfam; ++i) {
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      family = i;
      break;
    }
  }
  if (family == UINT32_MAX) floor_unavailable("no compute queue");
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkDevice device;
  CHECK(vkCreateDevice(pd, &dci, NULL, &device));
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);

  // 64 floats of host-visible coherent memory.
  enum { kElements = 64 };
  VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = kElements * sizeof(float);
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buffer;
  CHECK(vkCreateBuffer(device, &bci, NULL, &buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, buffer, &req);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) {
      type = i;
      break;
    }
  }
  if (type == UINT32_MAX) floor_unavailable("no host-visible memory");
  VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  VkDeviceMemory memory;
  CHECK(vkAllocateMemory(device, &mai, NULL, &memory));
  CHECK(vkBindBufferMemory(device, buffer, memory, 0));
  float* host;
  CHECK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, (void**)&host));
  memset(host, 0, kElements * sizeof(float));

  // The pipeline: binding 0 a storage buffer, one int of push constants,
  // specialization constant 0 the workgroup size.
  VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = code_size;
  smci.pCode = (const uint32_t*)code;
  VkShaderModule shader;
  CHECK(vkCreateShaderModule(device, &smci, NULL, &shader));
  VkDescriptorSetLayoutBinding binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                          VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  VkDescriptorSetLayoutCreateInfo dslci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.bindingCount = 1;
  dslci.pBindings = &binding;
  VkDescriptorSetLayout set_layout;
  CHECK(vkCreateDescriptorSetLayout(device, &dslci, NULL, &set_layout));
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
  VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &set_layout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  VkPipelineLayout layout;
  CHECK(vkCreatePipelineLayout(device, &plci, NULL, &layout));
  uint32_t block = kElements;
  VkSpecializationMapEntry entry = {0, 0, 4};
  VkSpecializationInfo spec = {1, &entry, 4, &block};
  VkComputePipelineCreateInfo cpci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = shader;
  cpci.stage.pName = "main";
  cpci.stage.pSpecializationInfo = &spec;
  cpci.layout = layout;
  VkPipeline pipeline;
  CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  VkDescriptorPool pool;
  CHECK(vkCreateDescriptorPool(device, &dpci, NULL, &pool));
  VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsai.descriptorPool = pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &set_layout;
  VkDescriptorSet set;
  CHECK(vkAllocateDescriptorSets(device, &dsai, &set));
  VkDescriptorBufferInfo dbi = {buffer, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  write.dstSet = set;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &dbi;
  vkUpdateDescriptorSets(device, 1, &write, 0, NULL);

  // One command buffer, recorded once: the dispatches and a barrier that makes
  // their writes visible to the host.
  VkCommandPoolCreateInfo cpool = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpool.queueFamilyIndex = family;
  VkCommandPool commands;
  CHECK(vkCreateCommandPool(device, &cpool, NULL, &commands));
  VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = commands;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  CHECK(vkAllocateCommandBuffers(device, &cbai, &cmd));
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CHECK(vkBeginCommandBuffer(cmd, &begin));
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  int32_t count = kElements;
  vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &count);
  for (long d = 0; d < dispatches; ++d) {
    if (d > 0) {  // each dispatch reads and writes what the one before wrote
      VkMemoryBarrier between = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      between.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      between.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &between, 0, NULL, 0, NULL);
    }
    vkCmdDispatch(cmd, 1, 1, 1);
  }
  VkMemoryBarrier after = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &after, 0, NULL, 0, NULL);
  CHECK(vkEndCommandBuffer(cmd));
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  CHECK(vkCreateFence(device, &fci, NULL, &fence));
  VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;

  double* per = malloc(sizeof(double) * (size_t)batches);
  long launched = 0;
  for (int b = -1; b < batches; ++b) {  // batch -1: warm-up
    const long submits = n / dispatches > 0 ? n / dispatches : 1;
    double start = floor_now();
    for (long i = 0; i < submits; ++i) {
      CHECK(vkQueueSubmit(queue, 1, &submit, fence));
      CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
      CHECK(vkResetFences(device, 1, &fence));
    }
    double elapsed = floor_now() - start;
    launched += submits * dispatches;
    if (b >= 0) per[b] = elapsed / (double)(submits * dispatches);
  }
  if (host[0] != (float)launched || host[kElements - 1] != (float)launched) {
    fprintf(stderr, "add_one ran %g times, expected %ld\n", host[0], launched);
    return 1;
  }
  printf("%.12g\n", floor_best(per, batches));
  return 0;
}
