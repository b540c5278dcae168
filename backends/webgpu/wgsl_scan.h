// What the WebGPU runtime needs to know about a WGSL module before wgpu sees
// it: its compute entry points with their @workgroup_size, its override
// constants and its group-0 bindings. A light scan (comments stripped,
// attributes and declarations read), not a parser: wgpu validates the shader
// itself; this only decides launch conventions and early, clear errors.
#ifndef MODRT_BACKENDS_WEBGPU_WGSL_SCAN_H_
#define MODRT_BACKENDS_WEBGPU_WGSL_SCAN_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace modrt {
namespace webgpu {

// One dimension of @workgroup_size: a number (a literal or a `const` of
// one), an override constant set at launch, or something else (an
// expression: left to wgpu). An omitted y or z is the number 1.
struct WorkgroupDim {
  std::optional<int64_t> value;
  std::string override_name;
};

struct EntryPoint {
  std::string name;
  bool has_workgroup_size = false;
  std::array<WorkgroupDim, 3> size{};
};

struct Binding {
  std::string address_space;  // "storage", "uniform", ...
  std::string access;         // "read", "read_write", "" (the default)
};

struct WgslInfo {
  std::vector<EntryPoint> entries;     // @compute functions, in order
  std::vector<std::string> overrides;  // every override constant's name
  std::map<uint32_t, Binding> group0;  // @group(0) @binding(N) var<...>
};

WgslInfo ScanWgsl(const std::string& source);

// The offset of the first byte of `source` that is not valid UTF-8 (WGSL is
// UTF-8 text), or npos. wgpu-native converts such text lossily and naga then
// panics (aborting the process) formatting an error at a shifted offset.
size_t InvalidUtf8At(const std::string& source);

}  // namespace webgpu
}  // namespace modrt

#endif  // MODRT_BACKENDS_WEBGPU_WGSL_SCAN_H_
