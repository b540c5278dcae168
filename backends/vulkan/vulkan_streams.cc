#include "vulkan_streams.h"

#include <utility>

namespace modrt {
namespace vulkan {

using namespace ::modrt::plugin;  // NOLINT(build/namespaces)

namespace {

// At most this many completed slots are kept per stream; more are destroyed.
constexpr size_t kMaxFreeSlots = 64;

}  // namespace

Stream::Stream(Device& d) : d_(d) {
  const VkApi& vk = Workspace::Get().vk();
  auto pool = Make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;  // slots re-record their buffers
  pool.queueFamilyIndex = d.queue_family;
  MODRT_VK_CHECK(vk.vkCreateCommandPool(d.device, &pool, nullptr, &pool_),
                 "creating a command pool");
  auto type = Make<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  auto info = Make<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
  info.pNext = &type;
  VkResult r = vk.vkCreateSemaphore(d.device, &info, nullptr, &timeline_);
  if (r != VK_SUCCESS) {
    vk.vkDestroyCommandPool(d.device, pool_, nullptr);
    MODRT_VK_CHECK(r, "creating a timeline semaphore");
  }
}

Stream::~Stream() {
  // Whoever dropped the last reference waited for the stream's work (the
  // core before stream_destroy; a submission keeps the streams it waits on).
  const VkApi& vk = Workspace::Get().vk();
  for (auto& s : free_) DestroySlot(*s);
  for (auto& sub : in_flight_) {
    if (sub.slot) DestroySlot(*sub.slot);
  }
  vk.vkDestroySemaphore(d_.device, timeline_, nullptr);
  vk.vkDestroyCommandPool(d_.device, pool_, nullptr);
}

std::unique_ptr<Slot> Stream::AcquireSlotLocked() {
  if (!free_.empty()) {
    std::unique_ptr<Slot> s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  auto s = std::make_unique<Slot>();
  d_.shared->slots_created.fetch_add(1);
  auto alloc = Make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  MODRT_VK_CHECK(Workspace::Get().vk().vkAllocateCommandBuffers(d_.device, &alloc, &s->cmd),
                 "allocating a command buffer");
  return s;
}

void Stream::ReleaseSlotLocked(std::unique_ptr<Slot> s) {
  s->recorded = false;
  s->sets.clear();  // may be half written
  if (free_.size() < kMaxFreeSlots) {
    free_.push_back(std::move(s));
  } else {
    DestroySlot(*s);
  }
}

uint64_t Stream::SubmitLocked(VkCommandBuffer cmd, Submission submission, const std::string& what) {
  const uint64_t value = submitted_ + 1;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  for (const auto& [other, other_value] : waits_) {
    wait_semaphores.push_back(other->timeline());
    wait_values.push_back(other_value);
  }
  const std::vector<VkPipelineStageFlags> stages(waits_.size(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  auto values =
      Make<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
  values.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  values.pWaitSemaphoreValues = wait_values.data();
  values.signalSemaphoreValueCount = 1;
  values.pSignalSemaphoreValues = &value;
  auto submit = Make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.pNext = &values;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = stages.data();
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &timeline_;
  VkResult r;
  {
    std::lock_guard queue(d_.shared->queue);
    r = Workspace::Get().vk().vkQueueSubmit(d_.queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) {
    if (submission.slot) ReleaseSlotLocked(std::move(submission.slot));
    MODRT_VK_CHECK(r, what);
  }
  submitted_ = value;
  // The streams waited on stay alive while this submission may wait on them.
  for (auto& [other, other_value] : waits_) submission.keep.push_back(std::move(other));
  waits_.clear();
  submission.value = value;
  in_flight_.push_back(std::move(submission));
  return value;
}

void Stream::WaitLocked(std::shared_ptr<Stream> other, uint64_t value) {
  if (other.get() == this || value == 0) return;  // in order already, or nothing to wait for
  waits_.emplace_back(std::move(other), value);
}

void Stream::RetireLocked() {
  if (in_flight_.empty()) return;
  const VkApi& vk = Workspace::Get().vk();
  if (completed_ < in_flight_.front().value) {
    MODRT_VK_CHECK(vk.vkGetSemaphoreCounterValue(d_.device, timeline_, &completed_),
                   "reading a stream's progress");
  }
  while (!in_flight_.empty() && in_flight_.front().value <= completed_) {
    Submission done = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (done.on_complete) done.on_complete();
    if (done.slot) {
      if (free_.size() < kMaxFreeSlots) {
        free_.push_back(std::move(done.slot));
      } else {
        DestroySlot(*done.slot);
      }
    }
  }
}

bool Stream::Reached(uint64_t value) {
  std::lock_guard lock(mu_);
  if (completed_ < value) {
    MODRT_VK_CHECK(
        Workspace::Get().vk().vkGetSemaphoreCounterValue(d_.device, timeline_, &completed_),
        "reading a stream's progress");
  }
  RetireLocked();
  return completed_ >= value;
}

bool Stream::WaitFor(uint64_t value, uint64_t timeout_ns) {
  // Without the lock: launches on the stream go on while this waits.
  auto wait = Make<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  wait.semaphoreCount = 1;
  wait.pSemaphores = &timeline_;
  wait.pValues = &value;
  const VkResult r = Workspace::Get().vk().vkWaitSemaphores(d_.device, &wait, timeout_ns);
  if (r == VK_TIMEOUT) return false;
  MODRT_VK_CHECK(r, "waiting for a stream");
  std::lock_guard lock(mu_);
  RetireLocked();
  return true;
}

bool Stream::Synchronize(uint64_t timeout_ns) {
  uint64_t value;
  {
    std::lock_guard lock(mu_);
    value = submitted_;
  }
  return WaitFor(value, timeout_ns);
}

void Stream::DestroySlot(Slot& s) {
  const VkApi& vk = Workspace::Get().vk();
  if (s.cmd) vk.vkFreeCommandBuffers(d_.device, pool_, 1, &s.cmd);
  if (s.descriptors) vk.vkDestroyDescriptorPool(d_.device, s.descriptors, nullptr);
  if (s.uniforms) ReleaseBuffer(d_, *s.uniforms);
  s = Slot{};
}

Stream& StreamOf(void* native, Device& d) {
  return native != nullptr ? *static_cast<Stream*>(native) : DefaultStream(d);
}

Stream& DefaultStream(Device& d) {
  std::lock_guard lock(d.shared->streams);
  if (d.streams.empty()) d.streams.push_back(std::make_shared<Stream>(d));
  return *d.streams.front();
}

}  // namespace vulkan
}  // namespace modrt
