// Recorded launches (stream.h: GraphObj) and their registry functions
// (Python: modrt.Graph, Stream.capture).
#include <algorithm>
#include <memory>
#include <string>
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

void GraphObj::Replay(const std::shared_ptr<StreamState>& stream,
                      const std::vector<std::pair<Object*, Object*>>& bindings) {
  CheckBindings(bindings);
  // Checked mode: launch by launch, each checked after it ran, so an
  // out-of-bounds write is reported at the replay that made it, naming the
  // launch (not at the next checked launch, which would be blamed).
  if (std::any_of(launches_.begin(), launches_.end(), [](const Launch& l) { return l.checked; })) {
    return RunList(stream, bindings, /*check=*/true);
  }
  if (native_graph_ != nullptr && stream->native() != nullptr &&
      stream->native()->layer() == native_graph_->layer && !launches_.empty()) {
    // The backend's graph runs with the buffers it was last recorded with:
    // other bindings re-record it first (graph_update), or replay the list.
    if (!SameBindings(bindings) && !Rerecord(stream, bindings)) return RunList(stream, bindings);
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
  RunList(stream, bindings);
}

bool GraphObj::SameBindings(const Bindings& bindings) const {
  std::vector<std::pair<Object*, Object*>> now = bindings, then;
  for (const auto& [from, to] : native_bindings_) then.emplace_back(from.get(), to.get());
  std::sort(now.begin(), now.end());
  std::sort(then.begin(), then.end());
  return now == then;
}

bool GraphObj::Rerecord(const std::shared_ptr<StreamState>& stream, const Bindings& bindings) {
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
      RunList(stream, bindings);
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
  return true;
}

void GraphObj::RunList(const std::shared_ptr<StreamState>& stream, const Bindings& bindings,
                       bool check) {
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
  for (size_t i = 0; i < launches_.size(); ++i) {
    const Launch& l = launches_[i];
    args = l.args;
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
  // graph.replay(graph, stream, captured tensor, replacement, ...)
  RegisterGlobal("graph.replay", [](const Args& a, Ret*) {
    a.ExpectCount(2, "graph.replay", /*at_least=*/true);
    auto* g = static_cast<GraphObj*>(a.Obj(0, kModrtObjGraph, "graph"));
    const auto& s = StreamArg(a, 1)->shared();
    if (!SameDevice(s->device(), g->device())) {
      Fail("ValueError", "a graph captured on ", DeviceName(g->device()), " replays there, not on ",
           DeviceName(s->device()));
    }
    if (s->capture() != nullptr) Fail("RuntimeError", "cannot replay into a capturing stream");
    if ((a.size() - 2) % 2 != 0)
      Fail("ValueError", "graph.replay takes (captured, replacement) pairs");
    std::vector<std::pair<Object*, Object*>> bindings;
    for (int32_t i = 2; i < a.size(); i += 2) {
      bindings.emplace_back(a.Obj(i, kModrtObjTensor, "tensor"),
                            a.Obj(i + 1, kModrtObjTensor, "tensor"));
    }
    g->Replay(s, bindings);
  });
});

}  // namespace
}  // namespace modrt
