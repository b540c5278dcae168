// The device layer (plugin ABI 1.1: native streams, events, copies on a
// stream, graphs) over vulkan_streams.h and vulkan_graphs.h, as the device
// API's virtuals call it. Streams are Stream*, NULL for the default stream;
// events are timeline points with a timestamp query when timed; graphs are
// reusable command buffers captured from a stream, re-recorded for a replay
// that rebinds buffers.
#ifndef MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_LAYER_H_
#define MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_LAYER_H_

#include <cstddef>

#include "modrt/plugin/plugin.h"

namespace modrt {
namespace vulkan {

void* StreamCreate(int device_id);
void StreamDestroy(int device_id, void* stream);
void StreamSynchronize(int device_id, void* stream);
// Waits up to `timeout_s` (negative: without bound); true when the stream's
// work completed.
bool StreamWaitFor(int device_id, void* stream, double timeout_s);
void StreamWaitEvent(int device_id, void* stream, void* event);

// With `timing` (and a device whose queue has timestamps), a timestamp query
// written when the work before it completed.
void* EventRecord(int device_id, void* stream, bool timing);
bool EventQuery(void* event);
void EventSynchronize(void* event);
// NotImplementedError when the device has no timestamps.
double EventElapsedMs(int device_id, void* start, void* end);
void EventDestroy(void* event);

// Ranged copies on a stream, through a host-visible staging buffer.
void CopyFromHostAsync(const void* host, DLTensor* dst, size_t offset, size_t nbytes, void* stream);
void CopyToHostAsync(const DLTensor* src, size_t offset, void* host, size_t nbytes, void* stream);
// vkCmdCopyBuffer on a stream, or into the graph it captures.
void CopyDeviceToDevice(const DLTensor* src, size_t src_offset, DLTensor* dst, size_t dst_offset,
                        size_t nbytes, void* stream);

void GraphBegin(int device_id, void* stream);
void* GraphEnd(int device_id, void* stream);
void GraphLaunch(int device_id, void* graph, void* stream);
// Ends the capture on `stream` (a rebound replay's launches, recorded anew)
// and makes `graph` submit that recording from now on.
void GraphUpdate(int device_id, void* stream, void* graph);
void GraphDestroy(void* graph);

}  // namespace vulkan
}  // namespace modrt

#endif  // MODRT_BACKENDS_VULKAN_VULKAN_DEVICE_LAYER_H_
