/*
 * modrt C API: what the Python package (ctypes, modrt._ffi_ext) calls in
 * libmodrt_runtime.so; the two ship together and check MODRT_ABI_VERSION.
 * Backend plugins use plugin_api.h instead. No C++ exception crosses it:
 * every call returns 0 on success or -1 with a thread-local message
 * (ModrtGetLastError).
 *
 * Values are passed as ModrtValue. Arguments are borrowed by the callee; an
 * object returned in a ModrtValue carries one reference owned by the caller.
 */
#ifndef MODRT_C_API_H_
#define MODRT_C_API_H_

#include "modrt/abi/plugin_api.h"

/* Bumped on any change to this header or to the C++ classes the Python
 * extension and libmodrt_compiler.so share with the core. */
#define MODRT_ABI_VERSION 7

#define MODRT_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

MODRT_API int32_t ModrtAbiVersion(void);
MODRT_API const char* ModrtGetLastError(void);
MODRT_API void ModrtSetLastError(const char* message);

MODRT_API int ModrtObjectRetain(ModrtObjectHandle obj);
MODRT_API int ModrtObjectRelease(ModrtObjectHandle obj);
MODRT_API int32_t ModrtObjectTypeIndex(ModrtObjectHandle obj);

/* Strings and byte arrays: immutable objects. */
MODRT_API int ModrtBytesCreate(const char* data, size_t size, int is_string,
                               ModrtObjectHandle* out);
MODRT_API int ModrtBytesGet(ModrtObjectHandle obj, const char** data, size_t* size);

MODRT_API int ModrtFunctionCreate(ModrtSafeCallFunc func, void* resource, ModrtDeleter deleter,
                                  ModrtObjectHandle* out);
MODRT_API int ModrtFunctionCall(ModrtObjectHandle func, const ModrtValue* args, int32_t num_args,
                                ModrtValue* ret);

/* Global registry. ModrtGetGlobal sets *out to NULL when the name is absent. */
MODRT_API int ModrtRegisterGlobal(const char* name, ModrtObjectHandle func, int allow_override);
MODRT_API int ModrtGetGlobal(const char* name, ModrtObjectHandle* out);

MODRT_API int ModrtTensorGetDLTensor(ModrtObjectHandle tensor, DLTensor** out);
/* Takes ownership of `managed`, on success and on failure (its deleter has
 * run when an error is returned). A tensor that is not compact row-major is
 * refused unless `copy` is non-zero and it is host memory: then it is copied
 * into a new compact CPU tensor. */
MODRT_API int ModrtTensorFromDLPack(DLManagedTensor* managed, int copy, ModrtObjectHandle* out);
/* The same for DLPack >= 1.0 (DLManagedTensorVersioned): a major version
 * other than DLPACK_MAJOR_VERSION is refused; DLPACK_FLAG_BITMASK_READ_ONLY
 * makes a read-only tensor. */
MODRT_API int ModrtTensorFromDLPackVersioned(DLManagedTensorVersioned* managed, int copy,
                                             ModrtObjectHandle* out);
/* The result holds a reference to the tensor until its deleter runs. */
MODRT_API int ModrtTensorToDLPack(ModrtObjectHandle tensor, DLManagedTensor** out);
/* A DLManagedTensorVersioned of this DLPack version; `flags` are OR'ed into
 * its flags (e.g. DLPACK_FLAG_BITMASK_IS_COPIED), and a read-only tensor
 * always carries DLPACK_FLAG_BITMASK_READ_ONLY. Holds a reference to the
 * tensor until its deleter runs. */
MODRT_API int ModrtTensorToDLPackVersioned(ModrtObjectHandle tensor, uint64_t flags,
                                           DLManagedTensorVersioned** out);

/* Loads a backend plugin DSO (plugin_api.h): dlopen, its modrt_plugin_init,
 * the table and version checks, then its registration. Idempotent per file
 * (the same file through another path is not loaded twice). Every failure
 * (missing, empty, not an ELF object, unresolved symbol, no entry point, bad
 * table, major version mismatch, registration error) is an error naming the
 * file and the reason. */
MODRT_API int ModrtLoadPlugin(const char* path);

/* ModrtLoadPlugin with load-time configuration: `count` pairs of key and
 * value (NUL-terminated strings, copied), which the plugin reads while it
 * registers (plugin_api.h: load_option). A file already loaded keeps the
 * configuration of its first load. */
MODRT_API int ModrtLoadPluginWithOptions(const char* path, const char* const* keys,
                                         const char* const* values, size_t count);

/* Where a call may block. A caller that holds a lock of its own
 * while it calls in (Python's GIL) lets it go only for the parts of a call
 * that can wait: the core calls `enter` on the calling thread before such a
 * part (a bounded wait, a launch held back at the in-flight limit, a device
 * sync, a large synchronous copy, a module build) and `leave` with what
 * `enter` returned after it, with no core lock held at either point. Short
 * calls (a launch, a registry lookup) run without either. NULL for both: no
 * hooks (the default). */
typedef void* (*ModrtWaitEnterFunc)(void);
typedef void (*ModrtWaitLeaveFunc)(void* token);
MODRT_API void ModrtSetWaitHooks(ModrtWaitEnterFunc enter, ModrtWaitLeaveFunc leave);

/* Lets the caller end a wait that has no bound of its own (Ctrl-C). Between
 * the slices of such a wait (about every 50 ms: a wait for launches to
 * complete, a launch held back at the in-flight limit) the core calls `check`
 * on the waiting thread, outside the wait hooks' region (the caller's lock is
 * held again) and with no core lock held; a nonzero answer ends the wait with
 * the error kind "KeyboardInterrupt", naming what was waited for. NULL (the
 * default): such waits end only when what they wait for completes, or at
 * MODRT_WAIT_TIMEOUT seconds when that is set. */
typedef int32_t (*ModrtInterruptCheckFunc)(void);
MODRT_API void ModrtSetInterruptCheck(ModrtInterruptCheckFunc check);

/* Declares a backend's identity: what plugins call through their table, and
 * Python for in-tree and out-of-tree backends alike. */
MODRT_API int ModrtRegisterBackend(const ModrtBackendIdentity* identity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MODRT_C_API_H_ */
