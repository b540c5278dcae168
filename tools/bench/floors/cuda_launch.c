// The CUDA launch floor: an empty kernel launched from C with cuLaunchKernel
// in a loop (driver API, libcuda loaded with dlopen so this builds anywhere),
// cuCtxSynchronize once per batch. Exits 3 with `unavailable: ...` where
// there is no libcuda or no device.
#include <dlfcn.h>

#include "floor_common.h"

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUstream;

static const char* kPtx =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry empty()\n"
    "{\n"
    "  ret;\n"
    "}\n";

int main(int argc, char** argv) {
  long n;
  int batches;
  floor_args(argc, argv, &n, &batches);
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) floor_unavailable("libcuda.so.1 cannot be loaded (no NVIDIA driver here)");
  typedef CUresult (*Init)(unsigned);
  typedef CUresult (*DeviceGetCount)(int*);
  typedef CUresult (*DeviceGet)(CUdevice*, int);
  typedef CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice);
  typedef CUresult (*CtxSetCurrent)(CUcontext);
  typedef CUresult (*ModuleLoadData)(CUmodule*, const void*);
  typedef CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
  typedef CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void**, void**);
  typedef CUresult (*CtxSynchronize)(void);
#define LOAD(type, name)               \
  type name = (type)dlsym(lib, #name); \
  if (name == NULL) floor_unavailable("libcuda lacks " #name);
  LOAD(Init, cuInit)
  LOAD(DeviceGetCount, cuDeviceGetCount)
  LOAD(DeviceGet, cuDeviceGet)
  LOAD(PrimaryCtxRetain, cuDevicePrimaryCtxRetain)
  LOAD(CtxSetCurrent, cuCtxSetCurrent)
  LOAD(ModuleLoadData, cuModuleLoadData)
  LOAD(ModuleGetFunction, cuModuleGetFunction)
  LOAD(LaunchKernel, cuLaunchKernel)
  LOAD(CtxSynchronize, cuCtxSynchronize)
#undef LOAD
  CUresult r = cuInit(0);
  if (r != 0) floor_unavailable("cuInit failed (no usable NVIDIA device)");
  int count = 0;
  if (cuDeviceGetCount(&count) != 0 || count == 0) floor_unavailable("no CUDA device");
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  if ((r = cuDeviceGet(&dev, 0)) != 0) floor_fail("cuDeviceGet", r);
  if ((r = cuDevicePrimaryCtxRetain(&ctx, dev)) != 0) floor_fail("cuDevicePrimaryCtxRetain", r);
  if ((r = cuCtxSetCurrent(ctx)) != 0) floor_fail("cuCtxSetCurrent", r);
  if ((r = cuModuleLoadData(&mod, kPtx)) != 0) floor_fail("cuModuleLoadData", r);
  if ((r = cuModuleGetFunction(&fn, mod, "empty")) != 0) floor_fail("cuModuleGetFunction", r);
  double* per = malloc(sizeof(double) * (size_t)batches);
  for (int b = -1; b < batches; ++b) {  // batch -1: warm-up
    double start = floor_now();
    for (long i = 0; i < n; ++i) {
      r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
      if (r != 0) floor_fail("cuLaunchKernel", r);
    }
    if ((r = cuCtxSynchronize()) != 0) floor_fail("cuCtxSynchronize", r);
    double elapsed = floor_now() - start;
    if (b >= 0) per[b] = elapsed / (double)n;
  }
  printf("%.12g\n", floor_best(per, batches));
  return 0;
}
