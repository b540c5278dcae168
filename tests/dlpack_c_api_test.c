/* DLPack 1.x at the C API (c_api.h), from plain C: versioned export with its
 * version and flags, versioned import of a producer's tensor (read-only flag,
 * unknown major version, strided memory refused or copied), and the producer's
 * deleter run exactly once on every path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modrt/abi/c_api.h"

static int failures = 0;
#define EXPECT(cond, what)                                                          \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: FAILED: %s (%s)\n", __FILE__, __LINE__, what, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

static int deleted = 0;
static void count_deleter(DLManagedTensorVersioned* self) {
  (void)self;
  ++deleted;
}

static ModrtObjectHandle call_global(const char* name, const ModrtValue* args, int n,
                                     ModrtValue* ret) {
  ModrtObjectHandle f = NULL;
  if (ModrtGetGlobal(name, &f) != 0 || f == NULL) {
    fprintf(stderr, "no global %s\n", name);
    exit(1);
  }
  int status = ModrtFunctionCall(f, args, n, ret);
  ModrtObjectRelease(f);
  if (status != 0) {
    fprintf(stderr, "%s failed: %s\n", name, ModrtGetLastError());
    exit(1);
  }
  return ret->v_obj;
}

static int64_t read_only(ModrtObjectHandle tensor) {
  ModrtValue arg = {0}, ret = {0};
  arg.type_code = kModrtObject;
  arg.v_obj = tensor;
  call_global("tensor.read_only", &arg, 1, &ret);
  return ret.v_int64;
}

/* A producer's 2x3 float tensor over `data`, with `strides` (NULL: compact). */
static DLManagedTensorVersioned producer(float* data, int64_t* shape, int64_t* strides,
                                         uint32_t major, uint64_t flags) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = major;
  m.version.minor = 0;
  m.flags = flags;
  m.deleter = count_deleter;
  m.dl_tensor.data = data;
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.ndim = 2;
  m.dl_tensor.dtype.code = kDLFloat;
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.dtype.lanes = 1;
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  return m;
}

static void test_versioned_export(void) {
  ModrtValue args[4] = {{0}}, ret = {0};
  args[0].type_code = kModrtDevice;
  args[0].v_device.device_type = kDLCPU;
  args[1].type_code = kModrtRawStr;
  args[1].v_str = "float32";
  args[2].type_code = kModrtInt;
  args[2].v_int64 = 2;
  args[3].type_code = kModrtInt;
  args[3].v_int64 = 3;
  ModrtObjectHandle t = call_global("tensor.empty", args, 4, &ret);
  DLTensor* dl = NULL;
  EXPECT(ModrtTensorGetDLTensor(t, &dl) == 0, "borrow the DLTensor");

  DLManagedTensorVersioned* out = NULL;
  EXPECT(ModrtTensorToDLPackVersioned(t, DLPACK_FLAG_BITMASK_IS_COPIED, &out) == 0,
         "versioned export");
  EXPECT(out->version.major == DLPACK_MAJOR_VERSION && out->version.minor == DLPACK_MINOR_VERSION,
         "version");
  EXPECT(out->flags == DLPACK_FLAG_BITMASK_IS_COPIED, "flags: the caller's, not read-only");
  EXPECT(out->dl_tensor.data == dl->data, "zero-copy: the same memory");
  EXPECT(out->dl_tensor.ndim == 2 && out->dl_tensor.shape[0] == 2 && out->dl_tensor.shape[1] == 3,
         "shape");
  EXPECT(out->dl_tensor.dtype.code == kDLFloat && out->dl_tensor.dtype.bits == 32, "dtype");
  ModrtObjectRelease(t); /* the export keeps the tensor alive */
  ((float*)out->dl_tensor.data)[5] = 1.5f;
  out->deleter(out);
}

static void test_versioned_import_read_only(void) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned m = producer(data, shape, NULL, 1, DLPACK_FLAG_BITMASK_READ_ONLY);
  deleted = 0;
  ModrtObjectHandle t = NULL;
  EXPECT(ModrtTensorFromDLPackVersioned(&m, 0, &t) == 0, "versioned import");
  DLTensor* dl = NULL;
  ModrtTensorGetDLTensor(t, &dl);
  EXPECT(dl->data == data, "zero-copy import");
  EXPECT(read_only(t) == 1, "the read-only flag is kept");
  DLManagedTensorVersioned* again = NULL;
  EXPECT(ModrtTensorToDLPackVersioned(t, 0, &again) == 0, "re-export");
  EXPECT((again->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "re-exported read-only");
  again->deleter(again);
  EXPECT(deleted == 0, "the producer's tensor lives while modrt's does");
  ModrtObjectRelease(t);
  EXPECT(deleted == 1, "released once with the tensor");
}

static void test_unknown_major_is_refused_and_released(void) {
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned m = producer(data, shape, NULL, 2, 0);
  deleted = 0;
  ModrtObjectHandle t = NULL;
  EXPECT(ModrtTensorFromDLPackVersioned(&m, 0, &t) != 0, "DLPack 2.x refused");
  EXPECT(strstr(ModrtGetLastError(), "DLPack 2.0 tensor") != NULL, ModrtGetLastError());
  EXPECT(deleted == 1, "the deleter ran on refusal");
}

static void test_strided_is_refused_or_copied(void) {
  /* A transposed 3x2 view of 2x3 row-major memory {0..5}: element (i, j) is data[j * 3 + i]. */
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {1, 3};
  DLManagedTensorVersioned m = producer(data, shape, strides, 1, 0);
  deleted = 0;
  ModrtObjectHandle t = NULL;
  EXPECT(ModrtTensorFromDLPackVersioned(&m, 0, &t) != 0, "strided refused without copy");
  const char* e = ModrtGetLastError();
  EXPECT(strstr(e, "not compact row-major (shape [3, 2], strides [1, 3]") != NULL, e);
  EXPECT(strstr(e, "np.ascontiguousarray(x)") != NULL && strstr(e, "copy=True") != NULL, e);
  EXPECT(deleted == 1, "the deleter ran on refusal");

  m = producer(data, shape, strides, 1, 0);
  deleted = 0;
  EXPECT(ModrtTensorFromDLPackVersioned(&m, 1, &t) == 0, "strided copied with copy");
  EXPECT(deleted == 1, "the producer's tensor is released once copied");
  DLTensor* dl = NULL;
  ModrtTensorGetDLTensor(t, &dl);
  EXPECT(dl->data != (void*)data && dl->strides == NULL, "a new compact tensor");
  const float* c = (const float*)dl->data;
  const float want[6] = {0, 3, 1, 4, 2, 5};
  EXPECT(memcmp(c, want, sizeof want) == 0, "transposed values in row-major order");
  ModrtObjectRelease(t);
  EXPECT(deleted == 1, "not released twice");
}

static int legacy_deleted = 0;
static void legacy_deleter(DLManagedTensor* self) {
  (void)self;
  ++legacy_deleted;
}

static void test_legacy_import(void) {
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  DLManagedTensor m;
  memset(&m, 0, sizeof m);
  m.dl_tensor = producer(data, shape, NULL, 1, 0).dl_tensor;
  m.deleter = legacy_deleter;
  ModrtObjectHandle t = NULL;
  EXPECT(ModrtTensorFromDLPack(&m, 0, &t) == 0, "legacy import");
  EXPECT(read_only(t) == 0, "legacy tensors are writable");
  ModrtObjectRelease(t);
  EXPECT(legacy_deleted == 1, "legacy deleter once");
}

int main(void) {
  EXPECT(ModrtAbiVersion() == MODRT_ABI_VERSION, "ABI version of the loaded core");
  test_versioned_export();
  test_versioned_import_read_only();
  test_unknown_major_is_refused_and_released();
  test_strided_is_refused_or_copied();
  test_legacy_import();
  if (failures) {
    fprintf(stderr, "%d failed\n", failures);
    return 1;
  }
  printf("dlpack_c_api_test: all passed\n");
  return 0;
}
