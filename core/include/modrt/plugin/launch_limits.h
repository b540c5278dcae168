// The one wording of a launch over a device's limit, for every backend: each
// checks its grid and block against its device's reported limits before it
// launches, and refuses with this message (a ValueError).
#ifndef MODRT_LAUNCH_LIMITS_H_
#define MODRT_LAUNCH_LIMITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "modrt/plugin/common.h"

namespace modrt {
namespace common MODRT_COMMON_HIDDEN {

// "<kernel>: <quantity> = <value> exceeds the device's limit of <limit>
// (<limit_name>, <device>)": `quantity` is what the launch set (blockIdx.x,
// threadIdx.y, "threads per block", ...), `limit_name` the API's name for the
// limit, so that the user can look it up.
inline std::string LaunchLimitExceeded(std::string_view kernel, std::string_view quantity,
                                       int64_t value, uint64_t limit, std::string_view limit_name,
                                       std::string_view device) {
  return StrCat(kernel, ": ", quantity, " = ", value, " exceeds the device's limit of ", limit,
                " (", limit_name, ", ", device, ")");
}

}  // namespace common

// Each side's name for it (the core's modrt::, a plugin's modrt::plugin::).
using common::LaunchLimitExceeded;
namespace plugin {
using common::LaunchLimitExceeded;
}  // namespace plugin

}  // namespace modrt

#endif  // MODRT_LAUNCH_LIMITS_H_
