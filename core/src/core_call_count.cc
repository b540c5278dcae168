// A count of the calls plugins make into the core, for tests: with
// MODRT_COUNT_CORE_CALLS=1 in the environment when a plugin loads, it is
// given a copy of the core's table whose every entry counts the call on the
// calling thread, then forwards it. `testing.core_calls_from_plugins()` reads
// this thread's count: a test launches and checks that no plugin called back
// into the core meanwhile (a launch goes down once, plugin ABI 1.2).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "internal.h"
#include "modrt/abi/plugin_api.h"
#include "modrt/core/function.h"

namespace modrt {

namespace {

thread_local int64_t core_calls_here = 0;

// The counting entry for the core table's field `Field`.
template <auto Field>
struct Counted;
template <typename R, typename... A, R (*ModrtCoreApi::*Field)(A...)>
struct Counted<Field> {
  static R Call(A... args) {
    ++core_calls_here;
    return (CoreApi().*Field)(args...);
  }
};

bool Counting() {
  static const bool on = [] {
    const char* v = std::getenv("MODRT_COUNT_CORE_CALLS");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

}  // namespace

const ModrtCoreApi& PluginCoreApi() {
  if (!Counting()) return CoreApi();
  static const ModrtCoreApi counting = [] {
    ModrtCoreApi t = CoreApi();
#define MODRT_COUNTED(field) t.field = &Counted<&ModrtCoreApi::field>::Call;
    MODRT_COUNTED(set_last_error)
    MODRT_COUNTED(get_last_error)
    MODRT_COUNTED(object_retain)
    MODRT_COUNTED(object_release)
    MODRT_COUNTED(object_type_index)
    MODRT_COUNTED(bytes_create)
    MODRT_COUNTED(bytes_get)
    MODRT_COUNTED(function_create)
    MODRT_COUNTED(function_call)
    MODRT_COUNTED(register_global)
    MODRT_COUNTED(get_global)
    MODRT_COUNTED(tensor_get_dltensor)
    MODRT_COUNTED(device_kind_name)
    MODRT_COUNTED(dtype_to_string)
    MODRT_COUNTED(register_backend)
    MODRT_COUNTED(register_module_factory)
    MODRT_COUNTED(register_device_api)
    MODRT_COUNTED(module_create)
    MODRT_COUNTED(module_get_self)
    MODRT_COUNTED(payload_view)
    MODRT_COUNTED(payload_function)
    MODRT_COUNTED(function_arg)
    MODRT_COUNTED(function_launch_tag)
    MODRT_COUNTED(payload_shader)
    MODRT_COUNTED(kernel_args_pack)
    MODRT_COUNTED(set_error)
    MODRT_COUNTED(get_error_code)
    MODRT_COUNTED(get_error_message)
    MODRT_COUNTED(current_stream)
    MODRT_COUNTED(load_option)
#undef MODRT_COUNTED
    // Every entry is counted: a field added to the table must be added above.
    static_assert(sizeof(ModrtCoreApi) == offsetof(ModrtCoreApi, load_option) + sizeof(void*),
                  "count the core table's new entries");
    return t;
  }();
  return counting;
}

namespace {

MODRT_STATIC_INIT([] {
  RegisterGlobal("testing.core_calls_from_plugins", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "testing.core_calls_from_plugins");
    if (!Counting()) {
      Fail(
          "RuntimeError",
          "testing.core_calls_from_plugins: plugins were not loaded with MODRT_COUNT_CORE_CALLS=1");
    }
    r->SetInt(core_calls_here);
  });
});

}  // namespace
}  // namespace modrt
