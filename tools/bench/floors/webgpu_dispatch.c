// Floor of the webgpu-dispatch row: one small dispatch of the add_one kernel
// through wgpu-native's C API (the library of the wgpu wheel), submitted and
// waited for, with no runtime in between. WebGPU command buffers cannot be
// submitted twice, so each repetition does the least WebGPU allows: a command
// encoder, a compute pass with the pipeline and bind group made once, one
// dispatch, finish, submit, and wgpuDevicePoll(wait) — what modrt's WebGPU
// runtime and wgpu-py both do per dispatch.
//
// Usage: webgpu_dispatch N BATCHES
#include <stdint.h>
#include <string.h>

#include "floor_common.h"
#include "wgpu.h"

// The kernel of tools/bench/worker.py's WGSL_SOURCE.
static const char kShader[] =
    "@group(0) @binding(0) var<storage, read_write> a: array<f32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn add_one(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "  if (id.x < arrayLength(&a)) { a[id.x] = a[id.x] + 1.0; }\n"
    "}\n";
enum { kElements = 64, kBytes = kElements * 4 };

static WGPUStringView view(const char* s) {
  WGPUStringView v = {s, WGPU_STRLEN};
  return v;
}

struct request {
  int done;
  int ok;
  void* handle;
};

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message,
                       void* r, void* unused) {
  struct request* out = r;
  out->ok = status == WGPURequestAdapterStatus_Success;
  out->handle = adapter;
  out->done = 1;
}

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                      void* r, void* unused) {
  struct request* out = r;
  out->ok = status == WGPURequestDeviceStatus_Success;
  out->handle = device;
  out->done = 1;
}

static void on_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void* r, void* unused) {
  struct request* out = r;
  out->ok = status == WGPUMapAsyncStatus_Success;
  out->done = 1;
}

// One dispatch of add_one over the buffer bound in `group`, submitted and
// waited for.
static void dispatch(WGPUDevice device, WGPUQueue queue, WGPUComputePipeline pipeline,
                     WGPUBindGroup group) {
  WGPUCommandEncoder encoder = wgpuDeviceCreateCommandEncoder(device, NULL);
  WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(encoder, NULL);
  wgpuComputePassEncoderSetPipeline(pass, pipeline);
  wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, NULL);
  wgpuComputePassEncoderDispatchWorkgroups(pass, 1, 1, 1);
  wgpuComputePassEncoderEnd(pass);
  wgpuComputePassEncoderRelease(pass);
  WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder, NULL);
  wgpuQueueSubmit(queue, 1, &commands);
  wgpuCommandBufferRelease(commands);
  wgpuCommandEncoderRelease(encoder);
  wgpuDevicePoll(device, 1, NULL);
}

int main(int argc, char** argv) {
  long n;
  int batches;
  floor_args(argc, argv, &n, &batches);

  WGPUInstance instance = wgpuCreateInstance(NULL);
  if (instance == NULL) floor_unavailable("wgpu-native could not create an instance");
  struct request adapter = {0};
  WGPURequestAdapterCallbackInfo adapter_cb = {0};
  adapter_cb.mode = WGPUCallbackMode_AllowSpontaneous;
  adapter_cb.callback = on_adapter;
  adapter_cb.userdata1 = &adapter;
  wgpuInstanceRequestAdapter(instance, NULL, adapter_cb);
  for (int spin = 0; !adapter.done && spin < 1000; ++spin) wgpuInstanceProcessEvents(instance);
  if (!adapter.ok) floor_unavailable("wgpu-native found no adapter");
  struct request device_request = {0};
  WGPURequestDeviceCallbackInfo device_cb = {0};
  device_cb.mode = WGPUCallbackMode_AllowSpontaneous;
  device_cb.callback = on_device;
  device_cb.userdata1 = &device_request;
  wgpuAdapterRequestDevice(adapter.handle, NULL, device_cb);
  for (int spin = 0; !device_request.done && spin < 1000; ++spin)
    wgpuInstanceProcessEvents(instance);
  if (!device_request.ok) floor_unavailable("wgpu-native could not open a device");
  WGPUDevice device = device_request.handle;
  WGPUQueue queue = wgpuDeviceGetQueue(device);

  WGPUShaderSourceWGSL wgsl = {0};
  wgsl.chain.sType = WGPUSType_ShaderSourceWGSL;
  wgsl.code = view(kShader);
  WGPUShaderModuleDescriptor shader_desc = {0};
  shader_desc.nextInChain = &wgsl.chain;
  WGPUShaderModule shader = wgpuDeviceCreateShaderModule(device, &shader_desc);
  WGPUComputePipelineDescriptor pipeline_desc = {0};
  pipeline_desc.compute.module = shader;
  pipeline_desc.compute.entryPoint = view("add_one");
  WGPUComputePipeline pipeline = wgpuDeviceCreateComputePipeline(device, &pipeline_desc);
  if (pipeline == NULL) floor_fail("wgpuDeviceCreateComputePipeline", 0);

  WGPUBufferDescriptor buffer_desc = {0};
  buffer_desc.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc;
  buffer_desc.size = kBytes;
  WGPUBuffer buffer = wgpuDeviceCreateBuffer(device, &buffer_desc);  // zeroed by WebGPU
  WGPUBindGroupEntry entry = {0};
  entry.binding = 0;
  entry.buffer = buffer;
  entry.size = kBytes;
  WGPUBindGroupDescriptor group_desc = {0};
  group_desc.layout = wgpuComputePipelineGetBindGroupLayout(pipeline, 0);
  group_desc.entryCount = 1;
  group_desc.entries = &entry;
  WGPUBindGroup group = wgpuDeviceCreateBindGroup(device, &group_desc);

  double* per = malloc(sizeof(double) * (size_t)batches);
  long launched = 0;
  for (int b = -1; b < batches; ++b) {  // batch -1: warm-up
    double start = floor_now();
    for (long i = 0; i < n; ++i) dispatch(device, queue, pipeline, group);
    double elapsed = floor_now() - start;
    launched += n;
    if (b >= 0) per[b] = elapsed / (double)n;
  }

  // The kernel really ran `launched` times: read the buffer back.
  WGPUBufferDescriptor staging_desc = {0};
  staging_desc.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
  staging_desc.size = kBytes;
  WGPUBuffer staging = wgpuDeviceCreateBuffer(device, &staging_desc);
  WGPUCommandEncoder encoder = wgpuDeviceCreateCommandEncoder(device, NULL);
  wgpuCommandEncoderCopyBufferToBuffer(encoder, buffer, 0, staging, 0, kBytes);
  WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder, NULL);
  wgpuQueueSubmit(queue, 1, &commands);
  struct request mapped = {0};
  WGPUBufferMapCallbackInfo map_cb = {0};
  map_cb.mode = WGPUCallbackMode_AllowSpontaneous;
  map_cb.callback = on_mapped;
  map_cb.userdata1 = &mapped;
  wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, kBytes, map_cb);
  while (!mapped.done) wgpuDevicePoll(device, 1, NULL);
  if (!mapped.ok) floor_fail("wgpuBufferMapAsync", 0);
  float host[kElements];
  memcpy(host, wgpuBufferGetConstMappedRange(staging, 0, kBytes), kBytes);
  if (host[0] != (float)launched || host[kElements - 1] != (float)launched) {
    fprintf(stderr, "add_one ran %g times, expected %ld\n", host[0], launched);
    return 1;
  }
  printf("%.12g\n", floor_best(per, batches));
  return 0;
}
