// OpenCL on the codegen side: OpenCL C compiles to an OpenCL module whether or
// not libmodrt_runtime_opencl.so is loaded.
#include "modrt/backend.h"

namespace modrt {
namespace {

MODRT_STATIC_INIT([] { RegisterCodegenWithFallback(InTreeBackend("opencl")); });

}  // namespace
}  // namespace modrt
