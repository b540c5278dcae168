/*
 * The optional tables of the plugin ABI (1.1) that a device API's table
 * points to (ModrtDeviceApi.extensions, plugin_api.h): ranged copies, native
 * streams and events, recorded launches, typed device attributes and pinned
 * host memory. Plain C, included by plugin_api.h; each table is found by its
 * type on the chain and read only as far as its struct_size reaches
 * (docs/C_ABI.md).
 */
#ifndef MODRT_DEVICE_EXTENSIONS_H_
#define MODRT_DEVICE_EXTENSIONS_H_

#include <stddef.h>
#include <stdint.h>

#include "modrt/abi/c_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Optional tables that a table points to, PJRT-style: a chain of structs,
 * each starting with this header; a reader skips types it does not know. */
typedef struct ModrtExtension {
  size_t struct_size;
  int32_t type; /* ModrtExtensionType */
  const struct ModrtExtension* next;
} ModrtExtension;

typedef enum {
  /* ModrtRangedCopyExtension, on a device API's chain. */
  kModrtExtensionRangedCopy = 1,
  /* ModrtStreamExtension, on a device API's chain. */
  kModrtExtensionStreams = 2,
  /* ModrtGraphExtension, on a device API's chain (needs kModrtExtensionStreams). */
  kModrtExtensionGraphs = 3,
  /* ModrtDeviceAttributeExtension, on a device API's chain. */
  kModrtExtensionDeviceAttributes = 4,
  /* ModrtPinnedHostExtension, on a device API's chain. */
  kModrtExtensionPinnedHost = 5,
} ModrtExtensionType;

/* A device API's copies of part of a tensor: `nbytes` bytes at byte `offset`
 * of the tensor's memory. Without it the core stages a part through host
 * memory (reads the whole tensor, patches it, writes it back). */
typedef struct {
  ModrtExtension base; /* type kModrtExtensionRangedCopy */
  int (*copy_from_host_range)(void* self, const void* src, DLTensor* dst, size_t offset,
                              size_t nbytes);
  int (*copy_to_host_range)(void* self, const DLTensor* src, size_t offset, void* dst,
                            size_t nbytes);
} ModrtRangedCopyExtension;

/* Native queues and events (ABI 1.1, optional). With it, each modrt stream
 * of the device is one of the backend's own queues (a CUDA/HIP stream, an
 * OpenCL command queue, ...), made by stream_create; without it, the core
 * runs every stream's launches on the backend's one queue and orders them
 * itself (docs/C_ABI.md, "The device layer").
 *
 * Streams and events are the plugin's opaque pointers. Every `stream`
 * argument may be NULL: the plugin's default queue (the one sync() and the
 * whole-tensor copies use), which is what the device's default modrt stream
 * is; other modrt streams each own one queue from stream_create. A launch
 * finds the queue it goes to with core->current_stream (NULL: the default
 * queue). Offsets count bytes from the tensor's first byte (data +
 * byte_offset), as in ModrtRangedCopyExtension. Blocking calls (stream_synchronize,
 * event_synchronize) are made on a core worker thread without the GIL: the
 * core bounds every user-facing wait itself, so they may block as long as
 * the device takes. An asynchronous failure (a kernel fault, a lost device)
 * is reported by the blocking call or query that observes it. */
typedef struct {
  ModrtExtension base; /* type kModrtExtensionStreams */
  /* A new in-order queue on device_id. */
  int (*stream_create)(void* self, int32_t device_id, void** out);
  /* After the core has waited for the queue's work (never NULL). */
  int (*stream_destroy)(void* self, int32_t device_id, void* stream);
  /* Blocks until everything submitted to `stream` is complete. */
  int (*stream_synchronize)(void* self, int32_t device_id, void* stream);
  /* A point in `stream` after everything submitted to it so far; with
   * `timing` != 0 it carries a device timestamp for event_elapsed_ms. */
  int (*event_record)(void* self, int32_t device_id, void* stream, int32_t timing, void** out);
  /* *done = 1 when the work before the event is complete, else 0. */
  int (*event_query)(void* self, int32_t device_id, void* event, int32_t* done);
  /* Blocks until the event is complete. */
  int (*event_synchronize)(void* self, int32_t device_id, void* event);
  /* Milliseconds on the device's clock from `start` to `end` (both complete
   * and recorded with timing); kModrtErrorNotImplemented when the device has
   * no timestamps, never host time. */
  int (*event_elapsed_ms)(void* self, int32_t device_id, void* start, void* end, double* ms);
  int (*event_destroy)(void* self, int32_t device_id, void* event);
  /* Work submitted to `stream` later waits, on the device, for `event`
   * (possibly of another stream of the same device). */
  int (*stream_wait_event)(void* self, int32_t device_id, void* stream, void* event);
  /* Copies of `nbytes` at byte `offset` of a tensor's memory, ordered on
   * `stream` (NULL: the default queue); they may return before the copy is
   * done: the core keeps `host` alive and unchanged until an event recorded
   * after the copy is complete. */
  int (*copy_from_host_async)(void* self, const void* host, DLTensor* dst, size_t offset,
                              size_t nbytes, void* stream);
  int (*copy_to_host_async)(void* self, const DLTensor* src, size_t offset, void* host,
                            size_t nbytes, void* stream);
  /* Device to device on one device, ordered on `stream`; may return before the copy is done. */
  int (*copy_device_to_device)(void* self, const DLTensor* src, size_t src_offset, DLTensor* dst,
                               size_t dst_offset, size_t nbytes, void* stream);
  /* Later ABI 1.1 additions: see "Device layer, later additions" below. */
  int (*stream_adopt)(void* self, int32_t device_id, uint64_t external, void** out);
  const char* (*queue_description)(void* self, int32_t device_id, int32_t is_default);
  int (*stream_wait_for)(void* self, int32_t device_id, void* stream, double timeout_s,
                         int32_t* done);
} ModrtStreamExtension;

/* Recorded launches, native (ABI 1.1, optional): between graph_begin and
 * graph_end, the launches the plugin receives for `stream` are recorded
 * into a graph instead of run (a CUDA graph by stream capture, a reusable
 * Vulkan command buffer, an OpenCL command buffer, ...); graph_launch
 * submits the whole graph to a stream. The core keeps its own recorded list
 * beside it: a replay that rebinds buffers replays that list (launch by
 * launch, on the stream's native queue) unless graph_update, appended below,
 * re-records the graph. graph_begin may fail (a stream the
 * API cannot capture on): the core then records the list only. The core
 * destroys a graph only after every launch of it completed. */
typedef struct {
  ModrtExtension base; /* type kModrtExtensionGraphs */
  int (*graph_begin)(void* self, int32_t device_id, void* stream);
  /* *out = the recorded graph; on error the capture is abandoned. */
  int (*graph_end)(void* self, int32_t device_id, void* stream, void** out);
  int (*graph_launch)(void* self, int32_t device_id, void* graph, void* stream);
  int (*graph_destroy)(void* self, int32_t device_id, void* graph);
  /* Later ABI 1.1 addition: see "Device layer, later additions" below. */
  int (*graph_update)(void* self, int32_t device_id, void* stream, void* graph);
} ModrtGraphExtension;

/* ------------------------------------------------------------------------ */
/* Device attributes, typed (ABI 1.1, optional). The well-known attributes
 * are an enum; each has one name (what ABI 1.0's get_attr takes and
 * modrt.Device.attr reads) and one value type. A device API with
 * ModrtDeviceAttributeExtension on its chain answers them by enum; the core
 * asks one without it (an ABI 1.0 plugin) by name through get_attr, which
 * stays the path for a backend's own named attributes. */
typedef enum {
  kModrtDeviceAttrName = 1,                    /* str: the device's name */
  kModrtDeviceAttrVendor = 2,                  /* str */
  kModrtDeviceAttrComputeVersion = 3,          /* str: "8.6", an API version, ... */
  kModrtDeviceAttrComputeUnits = 4,            /* int: SMs, CUs, cores */
  kModrtDeviceAttrMaxThreadsPerBlock = 5,      /* int: per block / workgroup */
  kModrtDeviceAttrMaxSharedMemoryPerBlock = 6, /* int: bytes of shared / local memory */
  kModrtDeviceAttrWarpSize = 7,                /* int: warp, wavefront or subgroup size */
  kModrtDeviceAttrTotalMemory = 8,             /* int: bytes of device memory */
  kModrtDeviceAttrMaxAllocSize = 9,            /* int: bytes of one allocation */
  kModrtDeviceAttrMaxBlockDimX = 10,           /* int */
  kModrtDeviceAttrMaxBlockDimY = 11,           /* int */
  kModrtDeviceAttrMaxBlockDimZ = 12,           /* int */
  kModrtDeviceAttrMaxGridDimX = 13,            /* int: blocks / workgroups per dispatch */
  kModrtDeviceAttrMaxGridDimY = 14,            /* int */
  kModrtDeviceAttrMaxGridDimZ = 15,            /* int */
} ModrtDeviceAttr;

#define MODRT_DEVICE_ATTR_FIRST kModrtDeviceAttrName
#define MODRT_DEVICE_ATTR_LAST kModrtDeviceAttrMaxGridDimZ

/* The name and value type of a well-known attribute; NULL for a value this
 * header does not know (a newer minor's). */
typedef struct {
  const char* name;
  int32_t is_string; /* 1: a string object; 0: kModrtInt */
} ModrtDeviceAttrInfo;

static inline const ModrtDeviceAttrInfo* ModrtDeviceAttrInfoOf(int32_t attr) {
  static const ModrtDeviceAttrInfo kInfo[] = {
      {"name", 1},
      {"vendor", 1},
      {"compute_version", 1},
      {"multi_processor_count", 0},
      {"max_threads_per_block", 0},
      {"max_shared_memory_per_block", 0},
      {"warp_size", 0},
      {"global_memory", 0},
      {"max_alloc_size", 0},
      {"max_block_dim_x", 0},
      {"max_block_dim_y", 0},
      {"max_block_dim_z", 0},
      {"max_grid_dim_x", 0},
      {"max_grid_dim_y", 0},
      {"max_grid_dim_z", 0},
  };
  if (attr < MODRT_DEVICE_ATTR_FIRST || attr > MODRT_DEVICE_ATTR_LAST) return NULL;
  return &kInfo[attr - MODRT_DEVICE_ATTR_FIRST];
}

typedef struct {
  ModrtExtension base; /* type kModrtExtensionDeviceAttributes */
  /* Writes attribute `attr` (a ModrtDeviceAttr) to *ret in its type, or
   * leaves it kModrtNone when the device does not report it or `attr` is
   * one this plugin does not know (a newer minor's). A string is returned as
   * a string object (kModrtObject) owned by the caller. */
  int (*get_attribute)(void* self, int32_t device_id, int32_t attr, ModrtValue* ret);
} ModrtDeviceAttributeExtension;

/* ---- Device layer, later additions (ABI 1.1, minor-compatible) ----------
 * Each is optional: a table filled before them is shorter (its struct_size
 * says so) and the core reads what a table has (MODRT_STRUCT_HAS) and treats
 * a NULL entry as absent.
 *
 * ModrtStreamExtension:
 * - stream_adopt: *out = a queue of this API made by another library,
 *   `external` being its handle as an integer (a CUstream, a hipStream_t),
 *   used like one from stream_create; the core never passes it to
 *   stream_destroy (its maker destroys it). NULL: no foreign queues.
 * - queue_description: what the default queue (is_default != 0) or a queue
 *   of stream_create is, in words, for Stream.implementation ("a CUDA stream
 *   (CU_STREAM_NON_BLOCKING)"); a string that lives for the process. NULL:
 *   the core describes it.
 * - stream_wait_for: waits up to `timeout_s` seconds for everything submitted
 *   to `stream`; *done = 1 when it is complete, 0 when the time ran out. The
 *   core calls it on the waiting thread itself (the GIL released), sparing
 *   the hand-off to its worker thread and back that stream_synchronize
 *   costs (two thread switches per wait), so only where the driver's own
 *   wait takes a timeout (vkWaitSemaphores). NULL: the worker waits.
 *
 * ModrtGraphExtension:
 * - graph_update: ends the capture begun with graph_begin on `stream` and
 *   makes `graph` (from graph_end, same launches in the same order) run what
 *   was captured from now on, in place (a CUDA graph's kernel parameters
 *   updated); launches of it already submitted are not affected. On error
 *   `graph` is unchanged and the capture is abandoned. The core captures a
 *   replay that rebinds buffers with it, so a rebound replay runs natively
 *   too. NULL: rebound replays run the core's list. */
#define MODRT_STREAM_EXTENSION_MIN_SIZE \
  (offsetof(ModrtStreamExtension, copy_device_to_device) + sizeof(void*))
#define MODRT_GRAPH_EXTENSION_MIN_SIZE \
  (offsetof(ModrtGraphExtension, graph_destroy) + sizeof(void*))

/* Page-locked ("pinned") host memory: host memory the device's copies read
 * and write directly (DMA), so an async copy from or to it needs no staging
 * copy. Alloc/free are called on the caller's thread; the memory must stay
 * valid until host_free, which the core calls only after every copy using
 * it completed. `description` says what it is ("cuMemHostAlloc
 * (page-locked, portable)"); it lives for the process. */
typedef struct {
  ModrtExtension base; /* type kModrtExtensionPinnedHost */
  int (*host_alloc)(void* self, int32_t device_id, size_t nbytes, void** out);
  int (*host_free)(void* self, int32_t device_id, void* ptr);
  const char* description;
} ModrtPinnedHostExtension;
/* ---- end of the later additions ----------------------------------------- */

/* The extension of `type` on `chain`, or NULL. */
static inline const ModrtExtension* ModrtFindExtension(const ModrtExtension* chain, int32_t type) {
  for (; chain != NULL; chain = chain->next) {
    if (chain->type == type) return chain;
  }
  return NULL;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MODRT_DEVICE_EXTENSIONS_H_ */
