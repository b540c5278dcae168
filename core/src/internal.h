// Core-internal declarations shared between the core's own sources.
#ifndef MODRT_CORE_SRC_INTERNAL_H_
#define MODRT_CORE_SRC_INTERNAL_H_

#include <string>
#include <string_view>

#include "modrt/function.h"
#include "modrt/payload.h"

namespace modrt {

void RegisterGlobalObject(const std::string& name, Ref<FunctionObj> func, bool allow_override);
void LoadPlugin(const std::string& path);

// A multi-shader payload has exactly one shader per function: refuses one
// whose fmap and smap disagree, naming the function or shader.
void CheckShaderMap(const PayloadObj& payload, const std::string& display_name);

// Lowercase hex of `bytes` (SHA-256 digests, key ids, keys).
std::string Hex(std::string_view bytes);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_INTERNAL_H_
