// Core-internal declarations shared between the core's own sources.
#ifndef MODRT_CORE_SRC_INTERNAL_H_
#define MODRT_CORE_SRC_INTERNAL_H_

#include <string>

#include "modrt/function.h"

namespace modrt {

void RegisterGlobalObject(const std::string& name, Ref<FunctionObj> func, bool allow_override);
void LoadPlugin(const std::string& path);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_INTERNAL_H_
