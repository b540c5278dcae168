// The registry functions of streams, events and waits (Python: modrt.Stream,
// modrt.Event, Device.sync and the wait at exit).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "internal.h"
#include "stream.h"

namespace modrt {

StreamObj* StreamArg(const Args& a, int32_t i) {
  return static_cast<StreamObj*>(a.Obj(i, kModrtObjStream, "stream"));
}

Ref<Object> StreamHandle(std::shared_ptr<StreamState> state) {
  return MakeObject<StreamObj>(std::move(state));
}

// Waits for every stream of `device` within one slice; true when all are done.
static bool WaitDevice(DLDevice device, double slice_s, double raise_after_s) {
  const auto deadline = StreamClock::now() + std::chrono::duration_cast<StreamClock::duration>(
                                                 std::chrono::duration<double>(slice_s));
  for (const auto& s : StreamsOf(device)) {
    const double left =
        std::max(0.0, std::chrono::duration<double>(deadline - StreamClock::now()).count());
    if (!s->Wait(s->submitted(), left, raise_after_s)) return false;
  }
  return true;
}

std::string Implementation(const StreamState& s) { return s.mode().Describe(s.is_default()); }

namespace {

EventObj* EventArg(const Args& a, int32_t i) {
  return static_cast<EventObj*>(a.Obj(i, kModrtObjEvent, "event"));
}

MODRT_STATIC_INIT([] {
  RegisterGlobal("stream.create", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.create");
    r->SetObject(StreamHandle(NewStream(a.Device(0), /*is_default=*/false)));
  });
  // stream.from_external(device, handle): another library's queue (a
  // CUstream / hipStream_t as an integer) as a modrt stream; never destroyed here.
  RegisterGlobal("stream.from_external", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "stream.from_external");
    const int64_t handle = a.Int(1);
    if (handle < 0) Fail("ValueError", "a foreign stream handle is an address, not ", handle);
    const uint64_t external = static_cast<uint64_t>(handle);
    r->SetObject(StreamHandle(NewStream(a.Device(0), /*is_default=*/false, &external)));
  });
  RegisterGlobal("stream.adopted", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.adopted");
    r->SetInt(StreamArg(a, 0)->state().adopted() ? 1 : 0);
  });
  RegisterGlobal("stream.default", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.default");
    DLDevice device = a.Device(0);
    GetExistingDeviceAPI(device);
    r->SetObject(StreamHandle(DefaultStream(device)));
  });
  // The stream a launch on `device` goes to from this thread now.
  RegisterGlobal("stream.current", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.current");
    DLDevice device = a.Device(0);
    GetExistingDeviceAPI(device);
    StreamFor(device);
    if (CurrentStreamSlot() && SameDevice(CurrentStreamSlot()->device(), device)) {
      r->SetObject(StreamHandle(CurrentStreamSlot()));
    } else {
      r->SetObject(StreamHandle(DefaultStream(device)));
    }
  });
  // Makes `stream` (or none) this thread's current stream; returns the previous one.
  RegisterGlobal("stream.swap_current", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.swap_current");
    std::shared_ptr<StreamState> next;
    if (a[0].type_code != kModrtNone) next = StreamArg(a, 0)->shared();
    std::shared_ptr<StreamState> previous = std::exchange(CurrentStreamSlot(), std::move(next));
    if (previous) r->SetObject(StreamHandle(std::move(previous)));
  });
  RegisterGlobal("stream.same", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "stream.same");
    r->SetInt(StreamArg(a, 0)->shared() == StreamArg(a, 1)->shared() ? 1 : 0);
  });
  RegisterGlobal("stream.device", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.device");
    r->SetDevice(StreamArg(a, 0)->state().device());
  });
  RegisterGlobal("stream.is_default", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.is_default");
    r->SetInt(StreamArg(a, 0)->state().is_default() ? 1 : 0);
  });
  RegisterGlobal("stream.native", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.native");
    r->SetInt(StreamArg(a, 0)->state().native() != nullptr ? 1 : 0);
  });
  RegisterGlobal("stream.implementation", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.implementation");
    r->SetStr(Implementation(StreamArg(a, 0)->state()));
  });
  RegisterGlobal("stream.submitted", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.submitted");
    r->SetInt(static_cast<int64_t>(StreamArg(a, 0)->state().submitted()));
  });
  // stream.wait(stream, slice_s, raise_after_s): 1 when everything submitted is complete.
  RegisterGlobal("stream.wait", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "stream.wait");
    StreamState& s = StreamArg(a, 0)->state();
    r->SetInt(s.Wait(s.submitted(), a.Float(1), a.Float(2)) ? 1 : 0);
  });
  RegisterGlobal("stream.pending", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.pending");
    r->SetStr(StreamArg(a, 0)->state().PendingSummary());
  });
  RegisterGlobal("stream.record", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.record");
    const auto& s = StreamArg(a, 0)->shared();
    // A graph records launches, not events: an event recorded while capturing
    // would mark nothing that runs (its time was NaN on a replay).
    if (s->capture() != nullptr) {
      if (!s->captured_here()) s->RefuseCaptureElsewhere("Stream.record()");
      Fail("RuntimeError",
           "Stream.record(): the stream is capturing a graph, and a graph records launches, not "
           "events; to time a replay, record events before and after g.replay()");
    }
    if (s->native() != nullptr) {
      uint64_t seq = 0;
      std::shared_ptr<NativeEvent> event = s->RecordNativeEvent(&seq);
      return r->SetObject(MakeObject<EventObj>(s, seq, std::move(event)));
    }
    std::shared_ptr<std::atomic<double>> time;
    const uint64_t seq = s->RecordMarker(s->host_executes() ? &time : nullptr);
    r->SetObject(MakeObject<EventObj>(s, seq, nullptr, std::move(time)));
  });
  // Later launches on the stream start after the event's launches completed.
  RegisterGlobal("stream.wait_event", [](const Args& a, Ret*) {
    a.ExpectCount(2, "stream.wait_event");
    StreamState& s = StreamArg(a, 0)->state();
    EventObj* e = EventArg(a, 1);
    if (&e->stream() == &s) return;
    if (s.host_executes()) return s.EnqueueWaitFor(e->shared_stream(), e->seq());
    if (s.native() != nullptr && e->native() != nullptr &&
        SameDevice(e->stream().device(), s.device())) {
      // On the device: the backend's queue waits for the backend's event.
      return s.native()->WaitEvent(*e->native());
    }
    // A backend's launches on one device share its in-order queue (emulated streams).
    if (s.native() == nullptr && !e->stream().host_executes() &&
        SameDevice(e->stream().device(), s.device())) {
      return;
    }
    e->stream().WaitUntilComplete(e->seq());
  });
  RegisterGlobal("event.stream", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "event.stream");
    r->SetObject(StreamHandle(EventArg(a, 0)->shared_stream()));
  });
  RegisterGlobal("event.query", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "event.query");
    EventObj* e = EventArg(a, 0);
    r->SetInt(e->stream().Query(e->seq(), e->native()) ? 1 : 0);
  });
  RegisterGlobal("event.wait", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "event.wait");
    EventObj* e = EventArg(a, 0);
    r->SetInt(e->stream().Wait(e->seq(), a.Float(1), a.Float(2), e->native()) ? 1 : 0);
  });
  // event.elapsed_ms(end, start): milliseconds between two completed events on the device clock.
  RegisterGlobal("event.elapsed_ms", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "event.elapsed_ms");
    EventObj* end = EventArg(a, 0);
    EventObj* start = EventArg(a, 1);
    for (EventObj* e : {end, start}) {
      if (!e->stream().has_device_time()) {
        Fail("RuntimeError", "no device timestamps on ", DeviceName(e->stream().device()), ": ",
             Implementation(e->stream()),
             ", so its events carry no device time (modrt does not substitute host time)");
      }
      if (!e->stream().Query(e->seq(), e->native())) {
        Fail("RuntimeError", "an event is not complete yet: synchronize it before elapsed_ms");
      }
    }
    if (end->native() != nullptr || start->native() != nullptr) {
      if (end->native() == nullptr || start->native() == nullptr ||
          !SameDevice(end->stream().device(), start->stream().device())) {
        Fail("ValueError", "elapsed_ms compares two events recorded on one device");
      }
      const double ms = end->stream().native()->ElapsedMs(*start->native(), *end->native());
      if (std::isnan(ms)) {
        Fail("RuntimeError", "elapsed_ms: ", DeviceName(end->stream().device()),
             " gave no time for these events");
      }
      return r->SetFloat(ms);
    }
    if (!end->stream().host_executes() || !start->stream().host_executes()) {
      Fail("ValueError", "elapsed_ms compares two events recorded on one device");
    }
    const double ms = (end->host_time() - start->host_time()) * 1e3;
    if (std::isnan(ms)) {
      Fail("RuntimeError",
           "elapsed_ms: an event carries no time (it was not reached by its stream)");
    }
    r->SetFloat(ms);
  });
  // device.wait(device, slice_s, raise_after_s): every stream of the device.
  RegisterGlobal("device.wait", [](const Args& a, Ret* r) {
    a.ExpectCount(3, "device.wait");
    NoteDeviceOpened(a.Device(0));  // a forked child: RuntimeError, not a wait on the parent's work
    r->SetInt(WaitDevice(a.Device(0), a.Float(1), a.Float(2)) ? 1 : 0);
  });
  // What is pending in the whole process ("" when nothing), for the exit wait.
  RegisterGlobal("stream.pending_everywhere", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "stream.pending_everywhere");
    std::string out;
    for (const auto& s : AllStreams()) {
      std::string p = s->PendingSummary();
      if (!p.empty()) out += (out.empty() ? "" : "; ") + p;
    }
    r->SetStr(out);
  });
  // stream.wait_everywhere(slice_s): 1 when every stream in the process is complete.
  RegisterGlobal("stream.wait_everywhere", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "stream.wait_everywhere");
    const auto deadline = StreamClock::now() + std::chrono::duration_cast<StreamClock::duration>(
                                                   std::chrono::duration<double>(a.Float(0)));
    for (const auto& s : AllStreams()) {
      const double left =
          std::max(0.0, std::chrono::duration<double>(deadline - StreamClock::now()).count());
      try {
        if (!s->Wait(s->submitted(), left, -1.0)) return r->SetInt(0);
      } catch (const Error&) {
        // A failure nobody waited for: nothing more will complete there.
      }
    }
    r->SetInt(1);
  });
});

}  // namespace
}  // namespace modrt
