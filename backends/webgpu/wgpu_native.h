// wgpu-native, dlopen'ed: the table of the functions the WebGPU runtime calls.
// The runtime never links libwgpu_native; it resolves each of these by name
// (webgpu.h's standard C API plus wgpu.h's wgpuDevicePoll) from the library
// that FindLibrary() picks.
#ifndef MODRT_BACKENDS_WEBGPU_WGPU_NATIVE_H_
#define MODRT_BACKENDS_WEBGPU_WGPU_NATIVE_H_

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "modrt/plugin/driver.h"
#include "webgpu/wgpu.h"

namespace modrt {
namespace webgpu {

// Every entry point the runtime uses, X(name).
// clang-format off
#define MODRT_WGPU_FUNCTIONS(X)               \
  X(wgpuGetVersion)                           \
  X(wgpuCreateInstance)                       \
  X(wgpuInstanceRequestAdapter)               \
  X(wgpuInstanceProcessEvents)                \
  X(wgpuInstanceRelease)                      \
  X(wgpuAdapterGetInfo)                      \
  X(wgpuAdapterInfoFreeMembers)               \
  X(wgpuAdapterGetLimits)                     \
  X(wgpuAdapterHasFeature)                    \
  X(wgpuAdapterRequestDevice)                 \
  X(wgpuAdapterRelease)                       \
  X(wgpuDeviceGetQueue)                      \
  X(wgpuDeviceGetLimits)                      \
  X(wgpuDeviceHasFeature)                     \
  X(wgpuDevicePoll)                           \
  X(wgpuDevicePushErrorScope)                 \
  X(wgpuDevicePopErrorScope)                  \
  X(wgpuDeviceCreateBuffer)                   \
  X(wgpuBufferDestroy)                       \
  X(wgpuBufferRelease)                        \
  X(wgpuBufferMapAsync)                       \
  X(wgpuBufferGetConstMappedRange)            \
  X(wgpuBufferGetMappedRange)                 \
  X(wgpuBufferUnmap)                          \
  X(wgpuDeviceCreateShaderModule)             \
  X(wgpuShaderModuleRelease)                  \
  X(wgpuDeviceCreateBindGroupLayout)          \
  X(wgpuBindGroupLayoutRelease)               \
  X(wgpuDeviceCreatePipelineLayout)           \
  X(wgpuPipelineLayoutRelease)                \
  X(wgpuDeviceCreateComputePipeline)          \
  X(wgpuComputePipelineAddRef)                \
  X(wgpuComputePipelineRelease)               \
  X(wgpuDeviceCreateQuerySet)                 \
  X(wgpuQuerySetRelease)                      \
  X(wgpuDeviceCreateBindGroup)                \
  X(wgpuBindGroupRelease)                     \
  X(wgpuDeviceCreateCommandEncoder)           \
  X(wgpuCommandEncoderBeginComputePass)       \
  X(wgpuCommandEncoderCopyBufferToBuffer)    \
  X(wgpuCommandEncoderResolveQuerySet)        \
  X(wgpuCommandEncoderFinish)                 \
  X(wgpuCommandEncoderRelease)                \
  X(wgpuComputePassEncoderSetPipeline)        \
  X(wgpuComputePassEncoderSetBindGroup)       \
  X(wgpuComputePassEncoderDispatchWorkgroups) \
  X(wgpuComputePassEncoderEnd)                \
  X(wgpuComputePassEncoderRelease)            \
  X(wgpuCommandBufferRelease)                 \
  X(wgpuQueueSubmit)                          \
  X(wgpuQueueOnSubmittedWorkDone)             \
  X(wgpuQueueGetTimestampPeriod)              \
  X(wgpuQueueWriteBuffer)                     \
  X(wgpuQueueRelease)
// clang-format on

// The resolved entry points, named as in webgpu.h / wgpu.h.
struct WgpuApi {
#define MODRT_WGPU_DECLARE(name) decltype(&::name) name = nullptr;
  MODRT_WGPU_FUNCTIONS(MODRT_WGPU_DECLARE)
#undef MODRT_WGPU_DECLARE
};

// Where the library is looked for, in order: MODRT_WEBGPU_DRIVER_LIBRARY
// alone when it is set; else `python_candidates` (the paths the Python hook
// found: wgpu/resources/libwgpu_native*.so of the installed `wgpu` package on
// sys.path), then the same files under the toolchain root's wheel directory
// (/opt/modrt/pip) and the directories of PYTHONPATH, then the loader's own
// path (libwgpu_native.so).
std::vector<std::string> DriverCandidates(const std::vector<std::string>& python_candidates);

// Opens the first candidate that loads and resolves every function into
// `api`. Empty on success; else why not, naming each file tried.
std::string LoadWgpuNative(const std::vector<std::string>& candidates,
                           std::unique_ptr<plugin::DriverLibrary>* lib, WgpuApi* api,
                           std::string* loaded_path);

// A WGPUStringView as a std::string ("" for the null view).
std::string ToString(WGPUStringView view);

// A string as a WGPUStringView, borrowing it: never a temporary (a view of
// one dangles before wgpu reads it).
inline WGPUStringView View(const std::string& s) { return WGPUStringView{s.data(), s.size()}; }
inline WGPUStringView View(const char* s) { return WGPUStringView{s, std::strlen(s)}; }
WGPUStringView View(std::string&&) = delete;

}  // namespace webgpu
}  // namespace modrt

#endif  // MODRT_BACKENDS_WEBGPU_WGPU_NATIVE_H_
