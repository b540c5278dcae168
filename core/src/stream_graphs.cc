// Recorded launches (stream.h: GraphObj) and their registry functions
// (Python: modrt.Graph, Stream.capture).
#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "internal.h"
#include "stream.h"

namespace modrt {

GraphObj::~GraphObj() {
  for (Launch& l : launches_) {
    for (ModrtValue& v : l.args) {
      if (v.type_code == kModrtObject && v.v_obj != nullptr)
        static_cast<Object*>(v.v_obj)->DecRef();
    }
  }
}

void GraphObj::Record(const FunctionObj* function, const FunctionInfo* info, const Args& args) {
  if (rerecording_) return;  // a rebound replay being recorded by the backend
  Launch l;
  l.function = Ref<FunctionObj>(const_cast<FunctionObj*>(function));
  l.info = info;
  l.checked = CallingChecked();
  for (int32_t i = 0; i < args.size(); ++i) {
    ModrtValue v = args[i];
    if (v.type_code == kModrtRawStr || v.type_code == kModrtDLTensorPtr) {
      Fail("TypeError", "argument ", i, ": a recorded launch takes tensors and numbers, not a ",
           TypeCodeName(v.type_code));
    }
    if (v.type_code == kModrtObject && v.v_obj != nullptr) static_cast<Object*>(v.v_obj)->IncRef();
    l.args.push_back(v);
  }
  launches_.push_back(std::move(l));
}

void GraphObj::BeginNative(StreamState& stream) {
  const NativeQueue* q = stream.native();
  if (q == nullptr || !q->records_graphs()) {
    why_not_native_ = "this backend does not record graphs itself (no graph extension)";
    return;
  }
  // A backend that cannot capture on this stream leaves the recording to the
  // core's list (Graph.native says which, Graph.why_not_native why).
  if (!q->BeginCapture()) {
    why_not_native_ = StrCat("the backend could not capture on this stream: ", LastErrorMessage());
    return;
  }
  native_capture_ = &stream;
}

void GraphObj::EndNative() {
  StreamState* stream = std::exchange(native_capture_, nullptr);
  if (stream == nullptr) return;
  std::string why;
  native_graph_ = stream->native()->EndCapture(&why);
  // Abandoned: the list replays.
  if (native_graph_ == nullptr && why_not_native_.empty()) why_not_native_ = std::move(why);
  if (native_failed_) native_graph_.reset();
}

namespace {

// "float32[300] on opencl(0)": a tensor as messages name it.
std::string DescribeTensor(TensorObj& t) {
  const DLTensor& dl = *t.dl();
  std::string dims;
  for (int32_t i = 0; i < dl.ndim; ++i) dims += StrCat(i == 0 ? "" : ", ", dl.shape[i]);
  return StrCat(DTypeToString(dl.dtype), "[", dims, "] on ", DeviceName(dl.device));
}

}  // namespace

bool GraphObj::Captured(const Object* tensor) const {
  for (const Launch& l : launches_) {
    for (const ModrtValue& v : l.args) {
      if (v.type_code == kModrtObject && v.v_obj == tensor) return true;
    }
  }
  return false;
}

void GraphObj::CheckBindings(const Bindings& bindings) const {
  for (size_t i = 0; i < bindings.size(); ++i) {
    const auto& [from, to] = bindings[i];
    auto* a = static_cast<TensorObj*>(from);
    auto* b = static_cast<TensorObj*>(to);
    // A binding for a tensor no launch reads or writes would change nothing:
    // most likely the wrong tensor was named.
    if (!Captured(from)) {
      Fail("ValueError",
           "graph.replay: a binding names a tensor the graph never captured: ", DescribeTensor(*a),
           " (bound to ", DescribeTensor(*b),
           "); no launch in the graph takes it, so the binding would change nothing. Bind the "
           "tensors the captured launches used");
    }
    for (size_t j = 0; j < i; ++j) {
      if (bindings[j].first == from && bindings[j].second != to) {
        Fail("ValueError", "graph.replay: the captured tensor ", DescribeTensor(*a),
             " is bound twice, to two different tensors");
      }
    }
    const DLTensor &x = *a->dl(), &y = *b->dl();
    if (!(x.dtype == y.dtype) || x.ndim != y.ndim ||
        !std::equal(x.shape, x.shape + x.ndim, y.shape) || !SameDevice(x.device, y.device)) {
      Fail(
          "ValueError",
          "a rebound tensor must have the captured tensor's shape, dtype and device: the captured ",
          DescribeTensor(*a), " was bound to ", DescribeTensor(*b));
    }
  }
}

void GraphObj::Replay(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
                      Scalars scalars) {
  CheckBindings(bindings);
  CheckScalars(&scalars);
  // Checked mode: launch by launch, each checked after it ran, so an
  // out-of-bounds write is reported at the replay that made it, naming the
  // launch (not at the next checked launch, which would be blamed).
  if (std::any_of(launches_.begin(), launches_.end(), [](const Launch& l) { return l.checked; })) {
    return RunList(stream, bindings, scalars, /*check=*/true);
  }
  if (native_graph_ != nullptr && stream->native() != nullptr &&
      stream->native()->layer() == native_graph_->layer && !launches_.empty()) {
    // The backend's graph runs with the buffers and scalars it was last
    // recorded with: others re-record it first (graph_update), or replay the list.
    if (!SameBindings(bindings, scalars) && !Rerecord(stream, bindings, scalars)) {
      return RunList(stream, bindings, scalars);
    }
    stream->Throttle(0);
    stream->native()->Launch(*native_graph_);
    LaunchRecord record;
    const Launch& first = launches_.front();
    record =
        RecordOf(*first.info, Args(first.args.data(), static_cast<int32_t>(first.args.size())));
    record.kernel = StrCat("graph of ", launches_.size(), " launches from ", record.kernel);
    stream->NoteLaunch(std::move(record), 0, native_graph_);
    return;
  }
  RunList(stream, bindings, scalars);
}

namespace {

// The same number: type, flag and bits.
bool SameScalar(const ModrtValue& a, const ModrtValue& b) {
  return a.type_code == b.type_code && a.reserved == b.reserved && a.v_int64 == b.v_int64;
}

}  // namespace

int32_t GraphObj::ScalarPosition(size_t launch, const ModrtValue& key) const {
  if (launch >= launches_.size()) {
    Fail("IndexError", "graph.replay: a scalar of launch ", launch, ", but the graph has ",
         launches_.size(), " launch", launches_.size() == 1 ? "" : "es", " (0 to ",
         launches_.size() == 0 ? 0 : launches_.size() - 1, ")");
  }
  const Launch& l = launches_[launch];
  const FunctionInfo& info = *l.info;
  const auto count = static_cast<int32_t>(l.args.size());
  if (static_cast<size_t>(count) != info.num_passed_args()) {
    Fail("TypeError", "graph.replay: launch ", launch, " (", info.ToString(),
         ") was captured with ", count, " values, which its function does not take");
  }
  int32_t position = -1;
  if (key.type_code == kModrtInt) {
    if (key.v_int64 < 0 || key.v_int64 >= count) {
      Fail("IndexError", "graph.replay: launch ", launch, " (", info.ToString(), ") took ", count,
           " values; it has no value ", key.v_int64);
    }
    position = static_cast<int32_t>(key.v_int64);
  } else {
    const std::string_view name = Args(&key, 1).Str(0);
    const size_t npassed = info.num_passed_args() - info.launch_tags.size();
    int32_t index = -1;
    for (const ArgInfo& a : info.args) {
      if (!a.launch_tag.empty()) continue;
      ++index;
      if (!a.name.empty() && a.name == name) position = index;
    }
    for (size_t j = 0; j < info.launch_tags.size(); ++j) {
      if (info.launch_tags[j] == name) position = static_cast<int32_t>(npassed + j);
    }
    if (position < 0) {
      Fail("KeyError", "graph.replay: launch ", launch, " (", info.ToString(),
           ") has no argument or launch parameter named '", name, "'");
    }
  }
  const ModrtValue& captured = l.args[position];
  if (captured.type_code != kModrtInt && captured.type_code != kModrtFloat) {
    Fail("TypeError", "graph.replay: value ", position, " of launch ", launch, " (", info.name,
         ") is a ", ValueTypeName(captured),
         ", not a scalar: rebind tensors with bindings (captured tensor: replacement)");
  }
  return position;
}

void GraphObj::CheckScalars(Scalars* scalars) const {
  std::stable_sort(scalars->begin(), scalars->end(), [](const auto& a, const auto& b) {
    return std::tie(a.launch, a.position) < std::tie(b.launch, b.position);
  });
  std::vector<ModrtValue> args;
  for (size_t i = 0; i < scalars->size(); ++i) {
    const ScalarBinding& s = (*scalars)[i];
    const Launch& l = launches_[s.launch];
    if (i > 0 && (*scalars)[i - 1].launch == s.launch && (*scalars)[i - 1].position == s.position &&
        !SameScalar((*scalars)[i - 1].value, s.value)) {
      Fail("ValueError", "graph.replay: value ", s.position, " of launch ", s.launch, " (",
           l.info->name, ") is given two different values");
    }
    if (s.value.type_code != kModrtInt && s.value.type_code != kModrtFloat) {
      Fail("TypeError", "graph.replay: value ", s.position, " of launch ", s.launch, " (",
           l.info->name, ") takes a number, not a ", ValueTypeName(s.value));
    }
    args = l.args;
    args[s.position] = s.value;
    try {
      CheckScalarValue(*l.info, Args(args.data(), static_cast<int32_t>(args.size())), s.position);
    } catch (const Error& e) {
      throw Error(e.kind(), StrCat("graph.replay: launch ", s.launch, ": ", e.what()));
    }
  }
  // What the launches took already changes nothing: dropped, so that a replay
  // naming the captured values reuses the recording as captured.
  scalars->erase(std::remove_if(scalars->begin(), scalars->end(),
                                [&](const ScalarBinding& s) {
                                  return SameScalar(launches_[s.launch].args[s.position], s.value);
                                }),
                 scalars->end());
  scalars->erase(std::unique(scalars->begin(), scalars->end(),
                             [](const ScalarBinding& a, const ScalarBinding& b) {
                               return a.launch == b.launch && a.position == b.position;
                             }),
                 scalars->end());
}

bool GraphObj::SameBindings(const Bindings& bindings, const Scalars& scalars) const {
  if (scalars.size() != native_scalars_.size()) return false;
  for (size_t i = 0; i < scalars.size(); ++i) {
    const ScalarBinding &a = scalars[i], &b = native_scalars_[i];
    if (a.launch != b.launch || a.position != b.position || !SameScalar(a.value, b.value))
      return false;
  }
  std::vector<std::pair<Object*, Object*>> now = bindings, then;
  for (const auto& [from, to] : native_bindings_) then.emplace_back(from.get(), to.get());
  std::sort(now.begin(), now.end());
  std::sort(then.begin(), then.end());
  return now == then;
}

bool GraphObj::Rerecord(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
                        const Scalars& scalars) {
  const NativeQueue* q = stream->native();
  if (!q->updates_graphs()) return false;
  if (!q->BeginCapture()) return false;
  // The launches reach the plugin, which records them; the list is unchanged.
  if (!stream->set_capture(this)) {  // another thread began a capture on it meanwhile
    q->AbandonCapture();
    stream->RefuseCaptureElsewhere("graph.replay");
  }
  native_capture_ = stream.get();
  rerecording_ = true;
  native_failed_ = false;
  struct EndCapture {
    GraphObj* graph;
    StreamState* stream;
    ~EndCapture() {
      stream->set_capture(nullptr);
      graph->native_capture_ = nullptr;
      graph->rerecording_ = false;
    }
  };
  bool recorded = true;
  {
    EndCapture end{this, stream.get()};
    try {
      RunList(stream, bindings, scalars);
    } catch (const Error&) {
      recorded = false;
    }
  }
  if (!recorded || native_failed_) {
    // The capture is ended and its graph dropped; the list replays instead.
    q->AbandonCapture();
    return false;
  }
  if (!q->EndCaptureInto(*native_graph_)) return false;
  native_bindings_.clear();
  for (const auto& [from, to] : bindings) native_bindings_.emplace_back(from, to);
  native_scalars_ = scalars;
  return true;
}

void GraphObj::RunList(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
                       const Scalars& scalars, bool check) {
  // Launches go to `stream`: it is made current for the replay.
  std::shared_ptr<StreamState>& current_stream = CurrentStreamSlot();
  std::shared_ptr<StreamState> saved = current_stream;
  struct Restore {
    std::shared_ptr<StreamState>* slot;
    std::shared_ptr<StreamState> value;
    ~Restore() { *slot = std::move(value); }
  } restore{&current_stream, std::move(saved)};
  current_stream = stream;
  std::vector<ModrtValue> args;
  auto scalar = scalars.begin();  // sorted by launch (CheckScalars)
  for (size_t i = 0; i < launches_.size(); ++i) {
    const Launch& l = launches_[i];
    args = l.args;
    for (; scalar != scalars.end() && scalar->launch == i; ++scalar)
      args[scalar->position] = scalar->value;
    // One simultaneous substitution: each captured argument is looked up
    // once, so {x: z, z: x} swaps x and z (a replacement is never rebound again).
    for (ModrtValue& v : args) {
      if (v.type_code != kModrtObject) continue;
      for (const auto& [from, to] : bindings) {
        if (v.v_obj == from) {
          v.v_obj = to;
          break;
        }
      }
    }
    OwnedValue ret;
    l.function->Call(args.data(), static_cast<int32_t>(args.size()), ret.out());
    if (check && l.checked) {
      CheckGuardsOf(
          StrCat(l.info->name, " (launch ", i + 1, " of ", launches_.size(), " in a graph replay)"),
          args.data(), static_cast<int32_t>(args.size()));
    }
  }
}

namespace {

MODRT_STATIC_INIT([] {
  RegisterGlobal("stream.begin_capture", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.begin_capture");
    StreamState& s = StreamArg(a, 0)->state();
    auto g = MakeObject<GraphObj>(s.device());
    if (s.capture() != nullptr || !s.set_capture(g.get()))
      Fail("RuntimeError", "this stream is already capturing a graph");
    try {
      g->BeginNative(s);
    } catch (...) {
      s.set_capture(nullptr);
      throw;
    }
    r->SetObject(g);
  });
  RegisterGlobal("stream.end_capture", [](const Args& a, Ret*) {
    a.ExpectCount(1, "stream.end_capture");
    StreamState& s = StreamArg(a, 0)->state();
    GraphObj* g = s.capture();
    if (g == nullptr) return;
    if (!s.captured_here())
      Fail("RuntimeError", "another thread's capture is under way on this stream");
    s.set_capture(nullptr);
    g->EndNative();
  });
  RegisterGlobal("graph.size", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "graph.size");
    r->SetInt(
        static_cast<int64_t>(static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"))->size()));
  });
  // Why the backend did not record the graph ("" when it did).
  RegisterGlobal("graph.why_not_native", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "graph.why_not_native");
    r->SetStr(static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"))->why_not_native());
  });
  // 1 when the backend recorded the graph (a replay without rebound buffers launches it).
  RegisterGlobal("graph.native", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "graph.native");
    r->SetInt(static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"))->native() ? 1 : 0);
  });
  // graph.replay(graph, stream, number of bindings, (captured tensor,
  // replacement) * that number, (launch index, argument index or name, new
  // value) * the rest)
  RegisterGlobal("graph.replay", [](const Args& a, Ret*) {
    a.ExpectCount(3, "graph.replay", /*at_least=*/true);
    auto* g = static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"));
    const auto& s = StreamArg(a, 1)->shared();
    if (!SameDevice(s->device(), g->device())) {
      Fail("ValueError", "a graph captured on ", DeviceName(g->device()), " replays there, not on ",
           DeviceName(s->device()));
    }
    if (s->capture() != nullptr) Fail("RuntimeError", "cannot replay into a capturing stream");
    const int64_t num_bindings = a.Int(2);
    const int32_t scalars_at = 3 + 2 * static_cast<int32_t>(num_bindings);
    if (num_bindings < 0 || scalars_at > a.size() || (a.size() - scalars_at) % 3 != 0) {
      Fail("ValueError",
           "graph.replay takes (captured, replacement) pairs, then (launch, argument, value) "
           "triples");
    }
    GraphObj::Bindings bindings;
    for (int32_t i = 3; i < scalars_at; i += 2) {
      bindings.emplace_back(a.Obj(i, kModrtObjTensor, "tensor"),
                            a.Obj(i + 1, kModrtObjTensor, "tensor"));
    }
    GraphObj::Scalars scalars;
    for (int32_t i = scalars_at; i < a.size(); i += 3) {
      const int64_t launch = a.Int(i);
      if (launch < 0) Fail("IndexError", "graph.replay: a scalar of launch ", launch);
      const auto index = static_cast<size_t>(launch);
      scalars.push_back({index, g->ScalarPosition(index, a[i + 1]), a[i + 2]});
    }
    g->Replay(s, bindings, std::move(scalars));
  });
});

}  // namespace
}  // namespace modrt
