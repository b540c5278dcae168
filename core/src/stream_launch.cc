// The current stream of each thread and device, the registry of streams,
// and launches through them (stream.h: StreamedLaunch, HostStreamedLaunch),
// with their records (RecordOf).
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "internal.h"
#include "stream.h"

namespace modrt {

std::shared_ptr<StreamState>& CurrentStreamSlot() {
  thread_local std::shared_ptr<StreamState> current_stream;
  return current_stream;
}

void* CurrentNativeStream(DLDevice device) {
  const std::shared_ptr<StreamState>& current_stream = CurrentStreamSlot();
  if (current_stream && SameDevice(current_stream->device(), device)) {
    return current_stream->native_stream();
  }
  return nullptr;
}

namespace {

std::string Dims(const int64_t* v) { return StrCat("[", v[0], ", ", v[1], ", ", v[2], "]"); }

}  // namespace

std::string LaunchRecord::Describe() const {
  if (!is_launch) return kernel;
  return StrCat(kernel, " (grid ", Dims(grid), ", block ", Dims(block), ")");
}

LaunchRecord RecordOf(const FunctionInfo& info, const Args& args) {
  LaunchRecord r;
  r.kernel = info.name;
  const size_t first = info.args.size();
  for (size_t j = 0; j < info.launch_tags.size(); ++j) {
    const int32_t i = static_cast<int32_t>(first + j);
    if (i >= args.size() || args[i].type_code != kModrtInt) continue;
    const std::string& tag = info.launch_tags[j];
    if (tag.size() < 3) continue;
    const int axis = tag.back() - 'x';
    if (axis < 0 || axis > 2) continue;
    if (tag.rfind("blockIdx.", 0) == 0) r.grid[axis] = args[i].v_int64;
    if (tag.rfind("threadIdx.", 0) == 0) r.block[axis] = args[i].v_int64;
  }
  return r;
}

size_t TensorArgBytes(const Args& args) {
  size_t bytes = 0;
  for (int32_t i = 0; i < args.size(); ++i) {
    const ModrtValue& v = args[i];
    if (v.type_code == kModrtObject && v.v_obj != nullptr &&
        static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor) {
      bytes += static_cast<TensorObj*>(v.v_obj)->nbytes();
    }
  }
  return bytes;
}

// ---------------------------------------------------------------------------

namespace {

struct StreamRegistry {
  std::mutex mu;
  std::map<std::pair<int32_t, int32_t>, std::shared_ptr<StreamState>> defaults;
  std::map<std::pair<int32_t, int32_t>, std::vector<std::weak_ptr<StreamState>>> all;
};

StreamRegistry& Streams() {
  // Leaked: worker threads may still run during process teardown.
  static StreamRegistry* r = std::make_unique<StreamRegistry>().release();
  return *r;
}

// Default streams of small device numbers, cached for the launch path.
constexpr int kCachedTypes = 64, kCachedIds = 8;
std::atomic<const std::shared_ptr<StreamState>*> default_cache[kCachedTypes][kCachedIds];

}  // namespace

std::shared_ptr<StreamState> NewStream(DLDevice device, bool is_default, const uint64_t* external) {
  DeviceAPI* api = GetExistingDeviceAPI(device);
  auto state = std::make_shared<StreamState>(device, api, is_default, external);
  StreamRegistry& r = Streams();
  std::lock_guard lock(r.mu);
  auto& list = r.all[{device.device_type, device.device_id}];
  list.erase(std::remove_if(list.begin(), list.end(), [](auto& w) { return w.expired(); }),
             list.end());
  list.push_back(state);
  return state;
}

std::vector<std::shared_ptr<StreamState>> AllStreams() {
  StreamRegistry& reg = Streams();
  std::lock_guard lock(reg.mu);
  std::vector<std::shared_ptr<StreamState>> streams;
  for (auto& [key, list] : reg.all) {
    for (auto& w : list) {
      if (auto s = w.lock()) streams.push_back(std::move(s));
    }
  }
  return streams;
}

const std::shared_ptr<StreamState>& DefaultStream(DLDevice device) {
  const bool cached = device.device_type >= 0 && device.device_type < kCachedTypes &&
                      device.device_id >= 0 && device.device_id < kCachedIds;
  if (cached) {
    if (auto* s =
            default_cache[device.device_type][device.device_id].load(std::memory_order_acquire)) {
      return *s;
    }
  }
  StreamRegistry& r = Streams();
  {
    std::lock_guard lock(r.mu);
    auto it = r.defaults.find({device.device_type, device.device_id});
    if (it != r.defaults.end()) return it->second;
  }
  std::shared_ptr<StreamState> made = NewStream(device, /*is_default=*/true);
  std::lock_guard lock(r.mu);
  auto [it, inserted] = r.defaults.try_emplace({device.device_type, device.device_id}, made);
  if (cached) {
    default_cache[device.device_type][device.device_id].store(&it->second,
                                                              std::memory_order_release);
  }
  return it->second;
}

bool DeviceMayBeStuck(DLDevice device) {
  if (!AnyStreamTimedOut()) return false;
  for (const auto& s : StreamsOf(device)) {
    if (s->TimedOutWithWorkPending()) return true;
  }
  return false;
}

bool AnyDeviceMayBeStuck() {
  if (!AnyStreamTimedOut()) return false;
  for (const auto& s : AllStreams()) {
    if (s->TimedOutWithWorkPending()) return true;
  }
  return false;
}

std::vector<std::shared_ptr<StreamState>> StreamsOf(DLDevice device) {
  StreamRegistry& r = Streams();
  std::lock_guard lock(r.mu);
  std::vector<std::shared_ptr<StreamState>> out;
  for (auto& w : r.all[{device.device_type, device.device_id}]) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

StreamState& StreamFor(DLDevice device) {
  const std::shared_ptr<StreamState>& current_stream = CurrentStreamSlot();
  if (current_stream && SameDevice(current_stream->device(), device)) return *current_stream;
  return *DefaultStream(device);
}

namespace {

// The device of a launch: its first buffer's, else device 0 of its type.
DLDevice LaunchDevice(const Args& args, DLDeviceType device_type) {
  for (int32_t i = 0; i < args.size(); ++i) {
    const ModrtValue& v = args[i];
    if (v.type_code == kModrtObject && v.v_obj != nullptr &&
        static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor) {
      return static_cast<TensorObj*>(v.v_obj)->dl()->device;
    }
    if (v.type_code == kModrtDLTensorPtr && v.v_tensor != nullptr) return v.v_tensor->device;
  }
  return DLDevice{device_type, 0};
}

bool HasUniformBlocks(const FunctionInfo& info) {
  return std::any_of(info.args.begin(), info.args.end(),
                     [](const ArgInfo& a) { return a.uniform_block; });
}

// Writes `bytes` into the new tensor `t` before the launch that follows on
// stream `s`: on its native queue, so the device's other work is not waited
// for; now, when there is none or a graph is being captured.
void FillBlock(StreamState& s, TensorObj* t, std::string_view bytes, const std::string& kernel) {
  const NativeQueue* q = s.native();
  if (q == nullptr || s.capture() != nullptr) {
    t->device_api()->CopyFromHost(bytes.data(), t->dl(), bytes.size());
    return;
  }
  auto held = std::make_shared<std::string>(bytes);  // until the copy completed
  s.Throttle(0);
  q->CopyFromHost(held->data(), t->dl(), 0, held->size());
  LaunchRecord record;
  record.kernel = StrCat("the uniform block of ", kernel, " (", held->size(), " bytes)");
  record.is_launch = false;
  s.NoteLaunch(std::move(record), 0, std::move(held));
}

// A call's values with each uniform block given as host bytes (a numpy
// array, as Python passes it) replaced by a tensor of the launch's device
// holding them, made for this launch alone: launches in flight, and a
// graph's launches, each keep their own values. The pool hands the tensor's
// memory to no one else until the launches that may read it are complete
// (memory_pool.cc), and a graph holds the tensors it recorded.
class StagedUniformBlocks {
 public:
  StagedUniformBlocks(const FunctionInfo& info, const Args& args, DLDeviceType device_type) {
    const DLDevice device = LaunchDevice(args, device_type);
    int32_t idx = -1;  // the caller's value for argument i
    for (size_t i = 0; i < info.args.size(); ++i) {
      const ArgInfo& a = info.args[i];
      if (!a.launch_tag.empty()) continue;
      ++idx;
      if (!a.uniform_block || idx >= args.size()) continue;
      const ModrtValue& v = args[idx];
      if (v.type_code != kModrtObject || v.v_obj == nullptr ||
          static_cast<Object*>(v.v_obj)->type_index() != kModrtObjBytes) {
        continue;
      }
      const std::string_view bytes = args.Bytes(idx);
      if (bytes.size() != a.block_bytes()) {
        Fail("ValueError", UniformBlockLabel(info.name, i, a), ", got an array of ", bytes.size(),
             " bytes");
      }
      if (values_.empty()) values_.assign(args.values(), args.values() + args.size());
      Ref<TensorObj> t =
          TensorObj::Empty({static_cast<int64_t>(bytes.size())}, DLDataType{kDLUInt, 8, 1}, device);
      FillBlock(StreamFor(device), t.get(), bytes, info.name);
      values_[idx] = ModrtValue{};
      values_[idx].type_code = kModrtObject;
      values_[idx].v_obj = t.get();
      tensors_.push_back(std::move(t));
    }
  }

  // The call's values: `args`, or their copy with the blocks staged.
  Args Of(const Args& args) const {
    return values_.empty() ? args : Args(values_.data(), static_cast<int32_t>(values_.size()));
  }

 private:
  std::vector<ModrtValue> values_;
  std::vector<Ref<TensorObj>> tensors_;
};

// A function object whose body can name the object itself (to record it).
template <typename Body>
Ref<FunctionObj> SelfAwareFunction(Body body) {
  auto self = std::make_shared<const FunctionObj*>(nullptr);
  auto f = MakeObject<FunctionObj>(
      RawBody([self, body = std::move(body)](const ModrtValue* values, int32_t n, ModrtValue* ret) {
        body(*self, Args(values, n), ret);
      }));
  *self = f.get();
  return f;
}

}  // namespace

Ref<FunctionObj> StreamedLaunch(Ref<FunctionObj> inner, const FunctionInfo* info,
                                DLDeviceType device_type, Ref<Object> keep_alive) {
  auto launched = std::make_shared<std::atomic<bool>>(false);
  return SelfAwareFunction([inner = std::move(inner), info, device_type,
                            keep_alive = std::move(keep_alive), launched,
                            stages = HasUniformBlocks(*info)](const FunctionObj* self,
                                                              const Args& given, ModrtValue* ret) {
    std::optional<StagedUniformBlocks> staged;
    if (stages) staged.emplace(*info, given, device_type);
    const Args args = staged ? staged->Of(given) : given;
    // A backend may build the kernel's program or pipeline on its first
    // launch: that one lets the caller's lock (the GIL) go around the
    // plugin's call, later ones keep it unless they wait for room
    // (Throttle). The waits before the call are outside that region, where
    // Ctrl-C can end them (InterruptRequested).
    const bool first = !launched->exchange(true, std::memory_order_relaxed);
    auto call_inner = [&] {
      std::optional<WaitRegion> building;
      if (first) building.emplace();
      inner->Call(args.values(), args.size(), ret);
    };
    StreamState& stream = StreamFor(LaunchDevice(args, device_type));
    // A backend may wait in its driver for the device's queued work while
    // it builds the kernel's pipeline (lavapipe, wgpu-native), where Ctrl-C
    // cannot end the wait: after a timeout, the first launch waits here.
    if (first && DeviceMayBeStuck(stream.device())) WaitForStreams(stream.device());
    if (GraphObj* g = stream.capture()) {
      if (!stream.captured_here()) stream.RefuseCaptureElsewhere(info->name);
      if (g->capturing_natively()) {
        // The plugin records this launch into its graph (it does not run).
        try {
          call_inner();
        } catch (const Error& e) {
          g->AbandonNative(
              StrCat("the backend could not record a launch of ", info->name, ": ", e.what()));
          throw;
        } catch (...) {
          g->AbandonNative(StrCat("the backend could not record a launch of ", info->name));
          throw;
        }
      }
      return g->Record(self, info, args);
    }
    if (stream.host_executes()) {
      // A plugin that launches on host memory runs its launch itself, now:
      // after the work queued before it on the stream.
      stream.WaitUntilComplete(stream.RecordMarker());
      return call_inner();
    }
    const size_t bytes = TensorArgBytes(args);
    stream.Throttle(bytes);
    call_inner();
    stream.NoteLaunch(RecordOf(*info, args), bytes);
  });
}

Ref<FunctionObj> HostStreamedLaunch(HostLaunchPrepare prepare, const FunctionInfo* info) {
  return SelfAwareFunction(
      [prepare = std::move(prepare), info](const FunctionObj* self, const Args& args, ModrtValue*) {
        StreamState& stream = StreamFor(LaunchDevice(args, kDLCPU));
        if (GraphObj* g = stream.capture()) {
          if (!stream.captured_here()) stream.RefuseCaptureElsewhere(info->name);
          return g->Record(self, info, args);
        }
        std::function<void()> work = prepare(args);
        bool borrowed = false;
        for (int32_t i = 0; i < args.size(); ++i)
          borrowed |= args[i].type_code == kModrtDLTensorPtr;
        if (borrowed) {
          // Borrowed DLTensors cannot be kept for later: run now, after the stream's work.
          stream.WaitUntilComplete(stream.RecordMarker());
          work();
          return;
        }
        // The queued work holds the tensor objects until it has run.
        std::vector<Ref<Object>> held;
        for (int32_t i = 0; i < args.size(); ++i) {
          if (args[i].type_code == kModrtObject && args[i].v_obj != nullptr) {
            held.emplace_back(static_cast<Object*>(args[i].v_obj));
          }
        }
        stream.Enqueue(RecordOf(*info, args), TensorArgBytes(args),
                       [work = std::move(work), held = std::move(held)] { work(); });
      });
}

}  // namespace modrt
