// The core's table for the codegen parts (modrt/codegen/codegen.h): they run
// in libmodrt_compiler.so beside the core, not as a loaded plugin, so no
// modrt_plugin_init hands them one.
#include "internal.h"
#include "modrt/codegen/codegen.h"

namespace modrt {
namespace codegen {

const ModrtCoreApi& CoreTable() { return CoreApi(); }

}  // namespace codegen
}  // namespace modrt
