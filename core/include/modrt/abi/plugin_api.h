/*
 * The modrt plugin ABI: the one boundary between libmodrt_runtime.so (the
 * core) and a backend plugin DSO. Plain C, modelled on the PJRT C API.
 *
 * A plugin DSO exports exactly one symbol:
 *
 *   const ModrtPluginApi* modrt_plugin_init(const ModrtCoreApi* core);
 *
 * The core calls it once per file with its function table; the plugin keeps
 * `core` (valid for the whole process) and returns its own table. The core
 * then checks the plugin's table (struct_size, major, minor, required
 * functions) and only then calls plugin->register_plugin(), in which the
 * plugin registers its backend, device API, module factory and functions
 * through `core`. A plugin imports no symbol from the core: everything it
 * calls is in the table it was given.
 *
 * Versioning (docs/C_ABI.md):
 * - every table and every struct that may grow starts with `size_t
 *   struct_size`, set by whoever fills it to sizeof() as it was compiled;
 * - same major required; a plugin built for an older minor loads (the core
 *   treats fields past its struct_size as absent); a plugin built for a newer
 *   minor loads too, and must not call a core function past the core's
 *   struct_size (MODRT_CORE_HAS; the C++ wrapper checks it).
 *
 * Conventions: a function returning int returns 0, or -1 after reporting
 * the error. ABI 1.1: core->set_error(code, message) with a ModrtErrorCode;
 * ABI 1.0 (still understood): core->set_last_error("Kind: message"), Kind a
 * Python exception name (ValueError, TypeError, RuntimeError, ...). No C++
 * exception crosses.
 * Objects (strings, bytes, functions, modules, tensors, payloads) are opaque
 * reference-counted handles; an object returned through an out-parameter
 * carries one reference owned by the caller; arguments are borrowed.
 */
#ifndef MODRT_PLUGIN_API_H_
#define MODRT_PLUGIN_API_H_

#include "modrt/abi/c_types.h"
#include "modrt/abi/device_extensions.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MODRT_PLUGIN_ABI_MAJOR 1
#define MODRT_PLUGIN_ABI_MINOR 3

#define MODRT_PLUGIN_INIT_SYMBOL "modrt_plugin_init"

/* True when `table` (a pointer to a struct starting with struct_size) has
 * the field `field` of `type`: the struct it was filled as reaches past it. */
#define MODRT_STRUCT_HAS(type, table, field) \
  ((table)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))
#define MODRT_CORE_HAS(core, field) MODRT_STRUCT_HAS(ModrtCoreApi, core, field)

/* Typed errors (ABI 1.1): what failed, as a code; each maps to one Python
 * exception class (docs/C_ABI.md). A kind with no code here crosses as
 * kModrtErrorOther with a "Kind: message" message, as in ABI 1.0. */
typedef enum {
  kModrtErrorNone = 0,
  kModrtErrorRuntime = 1,        /* RuntimeError */
  kModrtErrorValue = 2,          /* ValueError */
  kModrtErrorType = 3,           /* TypeError */
  kModrtErrorKey = 4,            /* KeyError */
  kModrtErrorIndex = 5,          /* IndexError */
  kModrtErrorMemory = 6,         /* MemoryError: out of host or device memory */
  kModrtErrorTimeout = 7,        /* TimeoutError: a bounded wait ran out */
  kModrtErrorNotImplemented = 8, /* NotImplementedError */
  kModrtErrorOS = 9,             /* OSError */
  kModrtErrorFileNotFound = 10,  /* FileNotFoundError */
  kModrtErrorImport = 11,        /* ImportError */
  kModrtErrorOverflow = 12,      /* OverflowError */
  kModrtErrorAttribute = 13,     /* AttributeError */
  kModrtErrorOther = 99,         /* the message is "Kind: message" */
} ModrtErrorCode;

/* The two payload shapes (docs/C_ABI.md). */
typedef enum {
  kModrtSingleBinary = 0, /* code: bytes */
  kModrtMultiShader = 1,  /* smap: {function: bytes} */
} ModrtPayloadShape;

/* ------------------------------------------------------------------------ */
/* What a backend is: declared once, in backends/<x>/BUILD.bazel (in-tree) or
 * by the out-of-tree package, and registered with core->register_backend. */
typedef struct {
  size_t struct_size;
  const char* name;         /* "opencl": device kind, module kind, flag name */
  const char* display_name; /* "OpenCL" */
  int32_t device_type;      /* DLDeviceType */
  int32_t payload_shape;    /* ModrtPayloadShape */
  const char* formats;      /* accepted payload formats, comma-separated: "cl,xclbin" */
  /* ABI 1.3: 1 when a buffer's `data` is a device address a kernel may be
   * handed at a byte offset (the core adds DLTensor.byte_offset: CUDA, ROCm,
   * host memory); 0 when it is a handle (cl_mem, VkBuffer), where a tensor
   * with a byte offset is refused. An identity that ends before the field
   * (ABI 1.2 or older) gets the rule of those versions: 1 for kDLCUDA and
   * kDLROCM, else 0. */
  int32_t addressable_buffers;
} ModrtBackendIdentity;

/* A device family's memory and queries. `self` is passed back to each call.
 * The table and `self` must outlive the process. All functions required. */
typedef struct {
  size_t struct_size;
  void* self;
  /* Number of devices; 0 when the driver or the device is absent. */
  int (*device_count)(void* self, int32_t* out);
  /* Why there is no device (a string object; empty when there is one). */
  int (*unavailable_reason)(void* self, ModrtObjectHandle* out);
  /* Writes the attribute's value to *ret, or leaves it kModrtNone when unknown. */
  int (*get_attr)(void* self, int32_t device_id, const char* name, ModrtValue* ret);
  int (*alloc)(void* self, int32_t device_id, size_t nbytes, void** out);
  int (*free)(void* self, int32_t device_id, void* ptr);
  /* Whole-tensor copies; the tensor lives on this API's device. */
  int (*copy_from_host)(void* self, const void* src, DLTensor* dst, size_t nbytes);
  int (*copy_to_host)(void* self, const DLTensor* src, void* dst, size_t nbytes);
  int (*sync)(void* self, int32_t device_id);
  /* ABI 1.1: optional tables (NULL when none). */
  const ModrtExtension* extensions;
} ModrtDeviceApi;

struct ModrtKernelArgs; /* below: kernel arguments the core packed */

/* The plugin side of a module object made with core->module_create. One
 * table per plugin module class; `self` is the plugin's module. */
typedef struct {
  size_t struct_size;
  /* Called once, when the core's module object goes. Required. */
  void (*destroy)(void* self);
  /* *out = a function object, or NULL when the module has no such function. Required. */
  int (*get_function)(void* self, const char* name, ModrtObjectHandle* out);
  /* Required only for modules made without a payload (the core answers
   * these from the payload otherwise): its saved bytes (a bytes object) and
   * its function names (a string object, one name per line). */
  int (*save_to_bytes)(void* self, ModrtObjectHandle* out);
  int (*function_names)(void* self, ModrtObjectHandle* out);
  /* ABI 1.1, optional (NULL: none; only for modules made with a payload).
   * Launches the payload's function `function_index` (functions in name
   * order) with arguments the core has already checked and packed, as
   * kernel_args_pack does, on the queue args->stream names (ABI 1.2; from
   * a core of 1.1, core->current_stream). With it
   * a launch goes down once: the core packs, then calls this; get_function
   * is then asked only whether the module has the function. Without it the
   * core calls the function get_function returned, which packs through
   * kernel_args_pack. */
  int (*launch)(void* self, int64_t function_index, const struct ModrtKernelArgs* args);
} ModrtModuleVTable;

/* Makes a real module of a backend's kind from a payload (payload borrowed;
 * *out = the module object made with core->module_create). */
typedef int (*ModrtModuleCreateFunc)(void* ctx, ModrtObjectHandle payload, ModrtObjectHandle* out);

/* ------------------------------------------------------------------------ */
/* Read-only views of a payload. The pointers stay valid while the payload
 * object lives (a module made from it holds it). The caller sets
 * struct_size; the core fills what fits. */
typedef struct {
  size_t struct_size;
  int32_t shape; /* ModrtPayloadShape */
  const char* fmt;
  size_t fmt_size;
  const char* code; /* single-binary */
  size_t code_size;
  int64_t num_functions; /* in name order */
  int64_t num_shaders;   /* multi-shader, in name order */
} ModrtPayloadView;

typedef struct {
  size_t struct_size;
  /* The core's description of the function, for kernel_args_pack. */
  const void* info;
  const char* name;
  size_t name_size;
  int64_t num_args;
  int64_t num_launch_tags;
} ModrtFunctionView;

typedef struct {
  DLDataType dtype;
  int32_t is_buffer; /* a tensor of dtype, passed as its device pointer */
} ModrtArgInfo;

/* Kernel arguments marshalled by the core, the same way for every backend.
 * The caller provides arrays of num_args entries each; the core fills a slot
 * per argument with its value in its declared C type (buffers: the device
 * pointer), ptrs[i] = &slots[i], sizes[i] = its byte size, buffers[i] = the
 * tensor (NULL for scalars), and the launch configuration from the trailing
 * launch parameters. */
typedef struct ModrtKernelArgs {
  size_t struct_size;
  int64_t num_args; /* set by the caller: the length of the four arrays */
  uint64_t* slots;
  void** ptrs;
  size_t* sizes;
  const DLTensor** buffers;
  int64_t grid[3];
  int64_t block[3];
  int64_t dyn_shared_bytes;
  int32_t device_id; /* of every buffer argument (0 when there are none) */
  /* ABI 1.2: where the launch goes, filled by the core, so that a launch
   * makes no call back into it. A plugin reads them when struct_size reaches
   * them and, from kernel_args_pack, when the core's abi_minor is 2 or more
   * (an older core leaves them as they were: ask core->current_stream).
   * `stream`: the native queue (stream_create's) of the modrt stream the
   * launch is on, NULL for the plugin's default queue. `capturing`: 1 when
   * that stream is capturing a graph natively (between graph_begin and
   * graph_end on it): the plugin records the launch, it does not run it. */
  void* stream;
  int32_t capturing;
} ModrtKernelArgs;

/* The size of a ModrtKernelArgs of ABI 1.0 and 1.1 (up to device_id). */
#define MODRT_KERNEL_ARGS_1_0_SIZE (offsetof(ModrtKernelArgs, device_id) + sizeof(int32_t))

/* ------------------------------------------------------------------------ */
/* The core's function table, ABI 1.2. New functions are only ever appended. */
typedef struct ModrtCoreApi {
  size_t struct_size;
  int32_t abi_major;
  int32_t abi_minor;

  /* Errors: "Kind: message", thread-local. */
  void (*set_last_error)(const char* message);
  const char* (*get_last_error)(void);

  /* Objects. */
  int (*object_retain)(ModrtObjectHandle obj);
  int (*object_release)(ModrtObjectHandle obj);
  int32_t (*object_type_index)(ModrtObjectHandle obj); /* ModrtObjectType; -1 for NULL */
  int (*bytes_create)(const char* data, size_t size, int is_string, ModrtObjectHandle* out);
  int (*bytes_get)(ModrtObjectHandle obj, const char** data, size_t* size);

  /* Functions and the global registry. */
  int (*function_create)(ModrtSafeCallFunc func, void* resource, ModrtDeleter deleter,
                         ModrtObjectHandle* out);
  int (*function_call)(ModrtObjectHandle func, const ModrtValue* args, int32_t num_args,
                       ModrtValue* ret);
  int (*register_global)(const char* name, ModrtObjectHandle func, int allow_override);
  /* *out = NULL when absent. */
  int (*get_global)(const char* name, ModrtObjectHandle* out);

  /* Tensors and devices. */
  int (*tensor_get_dltensor)(ModrtObjectHandle tensor, DLTensor** out);
  /* The device kind name of a DLPack device type ("cpu", "opencl", ...), or
   * NULL when no backend names it. Valid for the process. */
  const char* (*device_kind_name)(int32_t device_type);
  /* "float32", "int32x4", ...: a string object. */
  int (*dtype_to_string)(DLDataType dtype, ModrtObjectHandle* out);

  /* Backends. register_backend declares a backend's identity (kind name <->
   * device type, payload shape, formats); registering the same identity
   * again is a no-op, a different one under a taken name or device type is
   * an error. The other three need the identity registered first. */
  int (*register_backend)(const ModrtBackendIdentity* identity);
  /* Registers module.create.<name> and module.load_from_bytes.<name>; both
   * check the payload against the identity before calling `create`. */
  int (*register_module_factory)(const char* name, ModrtModuleCreateFunc create, void* ctx);
  /* device_api.<name>; the table is copied, `api->self` must outlive the process. */
  int (*register_device_api)(const char* name, const ModrtDeviceApi* api);

  /* Modules of kind `kind`. With a payload, saving and inspection are the
   * core's (the one serializer: a real module and its fallback save
   * identical bytes); `payload` may be NULL, and then the vtable's
   * save_to_bytes and function_names are required. The core keeps `vtable`
   * (static) and owns `self` from here, also on error. */
  int (*module_create)(const ModrtModuleVTable* vtable, void* self, const char* kind,
                       ModrtObjectHandle payload, ModrtObjectHandle* out);
  /* *self = the plugin module behind `module` if it was made with `vtable`, else NULL. */
  int (*module_get_self)(ModrtObjectHandle module, const ModrtModuleVTable* vtable, void** self);

  /* Payloads. */
  int (*payload_view)(ModrtObjectHandle payload, ModrtPayloadView* out);
  int (*payload_function)(ModrtObjectHandle payload, int64_t index, ModrtFunctionView* out);
  int (*function_arg)(const void* info, int64_t index, ModrtArgInfo* out);
  /* "blockIdx.x", "threadIdx.y", "dyn_shared_mem", ... */
  int (*function_launch_tag)(const void* info, int64_t index, const char** out);
  int (*payload_shader)(ModrtObjectHandle payload, int64_t index, const char** name,
                        size_t* name_size, const char** data, size_t* size);

  /* Checks count, kinds, dtypes, device type and that all buffers share one
   * device (TypeError / ValueError naming the function and the argument),
   * then fills `out`. The launch hot path: no allocation in the core. */
  int (*kernel_args_pack)(const void* info, const ModrtValue* args, int32_t num_args,
                          int32_t device_type, ModrtKernelArgs* out);

  /* ABI 1.1. Typed errors: set_error reports an error by code (the message
   * without a "Kind: " prefix; kModrtErrorOther: with one); get_error_code
   * and get_error_message read this thread's last error, whichever way it
   * was set (get_last_error still gives "Kind: message"). */
  void (*set_error)(int32_t code, const char* message);
  int32_t (*get_error_code)(void);
  const char* (*get_error_message)(void);

  /* ABI 1.1, device layer. The native stream (from the device API's
   * stream_create) that a launch on the device goes to now: the calling
   * thread's current modrt stream on that device, or NULL for the plugin's
   * default queue. Since ABI 1.2 a launch carries it (ModrtKernelArgs.stream):
   * kept for plugins of 1.1 and for work that is not a launch. */
  int (*current_stream)(int32_t device_type, int32_t device_id, void** out);

  /* ABI 1.1, load-time configuration (optional: a plugin checks it with
   * MODRT_CORE_HAS). The value that whoever loaded this plugin gave for
   * `key` (ModrtLoadPluginWithOptions; Python: a backend record's
   * runtime_options), as a string object in *out, or *out = NULL when it
   * gave none. Valid only while the plugin registers (register_plugin):
   * the plugin keeps what it needs; called at any other time it is an
   * error. Keys are the backend's own, e.g. "nvrtc.package_roots". */
  int (*load_option)(const char* key, ModrtObjectHandle* out);
} ModrtCoreApi;

/* ------------------------------------------------------------------------ */
/* The plugin's table, returned by modrt_plugin_init. */
typedef struct {
  size_t struct_size;
  int32_t abi_major; /* MODRT_PLUGIN_ABI_MAJOR the plugin was built with */
  int32_t abi_minor;
  /* For messages: "opencl runtime", "acme test backend", ... May be NULL. */
  const char* name;
  /* Registers everything through the core table given to modrt_plugin_init.
   * Required; runs once, after the core accepted this table. */
  int (*register_plugin)(void);
} ModrtPluginApi;

/* The smallest tables the core accepts: ABI 1.0's. */
#define MODRT_PLUGIN_API_MIN_SIZE (offsetof(ModrtPluginApi, register_plugin) + sizeof(void*))
#define MODRT_DEVICE_API_MIN_SIZE (offsetof(ModrtDeviceApi, sync) + sizeof(void*))
#define MODRT_MODULE_VTABLE_MIN_SIZE (offsetof(ModrtModuleVTable, function_names) + sizeof(void*))
#define MODRT_BACKEND_IDENTITY_MIN_SIZE (offsetof(ModrtBackendIdentity, formats) + sizeof(void*))

typedef const ModrtPluginApi* (*ModrtPluginInitFunc)(const ModrtCoreApi* core);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MODRT_PLUGIN_API_H_ */
