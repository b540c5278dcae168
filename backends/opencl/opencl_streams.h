// The OpenCL device layer's queues (opencl_streams.cc).
#ifndef MODRT_BACKENDS_OPENCL_OPENCL_STREAMS_H_
#define MODRT_BACKENDS_OPENCL_OPENCL_STREAMS_H_

#include "opencl_driver.h"

namespace modrt {
namespace opencl {

// Streams as command queues, events as markers, copies on a queue.
void AddQueues(plugin::DeviceLayer* layer);

}  // namespace opencl
}  // namespace modrt

#endif  // MODRT_BACKENDS_OPENCL_OPENCL_STREAMS_H_
