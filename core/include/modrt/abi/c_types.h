/*
 * modrt C value types: what crosses every boundary (core <-> Python through
 * c_api.h, core <-> backend plugins through plugin_api.h). Plain C, stable
 * layout: a change here is a new major version of the plugin ABI.
 */
#ifndef MODRT_C_TYPES_H_
#define MODRT_C_TYPES_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  kModrtNone = 0,
  kModrtInt = 1,
  kModrtFloat = 2,
  kModrtOpaquePtr = 3,
  kModrtDevice = 4,
  /* Borrowed DLTensor*; arguments only. */
  kModrtDLTensorPtr = 5,
  /* Borrowed NUL-terminated string; arguments only. */
  kModrtRawStr = 6,
  kModrtObject = 7,
} ModrtTypeCode;

/* Type of an object behind a kModrtObject handle. */
typedef enum {
  kModrtObjString = 1,
  kModrtObjBytes = 2,
  kModrtObjFunction = 3,
  kModrtObjModule = 4,
  kModrtObjTensor = 5,
  kModrtObjPayload = 6,
} ModrtObjectType;

typedef void* ModrtObjectHandle;

/* ModrtValue.reserved of a number converted from an integer that int64 cannot
 * hold, so that a callee can refuse it instead of using a wrapped value. Every
 * other value has reserved = 0. */
typedef enum {
  kModrtNumberExact = 0,
  /* kModrtInt: v_int64 holds the bits of an unsigned value in [2**63, 2**64). */
  kModrtNumberUnsigned64 = 1,
  /* kModrtFloat: an integer outside [-2**63, 2**64); v_float64 is the nearest
   * double (an infinity beyond the double range). */
  kModrtNumberWideInt = 2,
} ModrtNumberFlag;

typedef struct {
  int32_t type_code; /* ModrtTypeCode */
  int32_t reserved;  /* ModrtNumberFlag for kModrtInt and kModrtFloat, else 0 */
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_str;
    DLDevice v_device;
    DLTensor* v_tensor;
    ModrtObjectHandle v_obj;
  };
} ModrtValue;

/* A function implemented in C (or Python through ctypes). Returns 0, or -1
 * after setting the last error. */
typedef int (*ModrtSafeCallFunc)(void* resource, const ModrtValue* args, int32_t num_args,
                                 ModrtValue* ret);
typedef void (*ModrtDeleter)(void* resource);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MODRT_C_TYPES_H_ */
