// What modrt reads from a WGSL module (docs/formats/wgsl.md): its compute
// entry points with their @workgroup_size, its override constants, its
// resources (every `@group(G) @binding(B) var<...>`, with its type) and the
// structs and aliases those types use; and from them the kernel's interface
// (ReadInterface): its arguments in (group, binding) order, and how each is
// bound. A light scan (comments stripped, attributes and declarations read),
// not a parser: wgpu validates the shader itself; this decides the binding
// layout, the inferred signature and early, clear errors.
//
// Compiled into the runtime DSO and, for reflection at compile time, into
// libmodrt_compiler.so (wgsl_reflect.cc): a hidden copy in each.
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
namespace webgpu __attribute__((visibility("hidden"))) {

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

  // One `@group(G) @binding(B) var<address_space[, access]> name: type`.
  struct Resource {
    uint32_t group = 0;
    uint32_t binding = 0;
    std::string name;
    std::string address_space;  // "storage", "uniform", ...
    std::string access;         // "read", "read_write", "" (the default: read)
    std::string type;           // as written, without spaces: "array<f32>", "Params"
  };

  struct StructMember {
    std::string name;
    std::string type;                    // without spaces
    std::optional<int64_t> align, size;  // @align(N), @size(N)
  };

  struct WgslInfo {
    std::vector<EntryPoint> entries;     // @compute functions, in order
    std::vector<std::string> overrides;  // every override constant's name
    std::vector<Resource> resources;     // by (group, binding)
    std::map<std::string, std::vector<StructMember>> structs;
    std::map<std::string, std::string> aliases;  // alias NAME = type
  };

  WgslInfo ScanWgsl(const std::string& source);

  // An integer literal (42, 42u, 42i, 0x2A), else nothing.
  std::optional<int64_t> IntLiteral(const std::string& text);

  // One kernel argument as the shader declares it.
  struct ShaderArg {
    std::string name;        // the variable's, or for a uniform struct its member's
    bool is_buffer = false;  // a storage buffer; else a scalar in a uniform
    bool read_only = false;  // var<storage, read> (or the default access)
    std::string wgsl_type;   // buffers: the element type ("f32", also of atomic/vec
                             // elements); scalars: the scalar's type
    std::string dtype;       // the modrt dtype: float32, float16, int32, uint32
    size_t resource = 0;     // index in WgslInfo::resources
    uint32_t offset = 0;     // scalars: the byte offset in its uniform block
    uint64_t min_bytes = 0;  // buffers: the least size the shader binds (wgpu's check at dispatch)
  };

  // A uniform resource's block: its size as WGSL lays it out.
  struct UniformBlock {
    size_t resource = 0;
    uint32_t size = 0;
  };

  struct Interface {
    std::vector<ShaderArg> args;         // storage and uniform resources, (group, binding) order
    std::vector<UniformBlock> uniforms;  // one per uniform resource, same order
    uint32_t max_group = 0;              // the highest group number used
    std::string error;                   // why the interface cannot be read; empty if it can
  };

  Interface ReadInterface(const WgslInfo& info);

  // "vadd(const float32* a, ..., int32 n; blockIdx.x, blockIdx.y, blockIdx.z[, threadIdx.x...])":
  // the signature of `entry` as the shader declares it (ReadInterface's
  // arguments, the three grid dimensions, threadIdx for each @workgroup_size
  // dimension that is an override constant, dyn_shared_mem when one is declared).
  std::string InferredSignature(const WgslInfo& info, const Interface& iface,
                                const EntryPoint& entry);

  // The shader's arguments as text, for errors: "@group(0) @binding(0) a: array<f32>
  // (const float32* a), ...".
  std::string DescribeInterface(const WgslInfo& info, const Interface& iface);

  // Whether a buffer of modrt dtype `given` may be bound where the shader
  // declares elements of `kernel` (the same dtype; or 8- and 16-bit data
  // packed into 32-bit integer words, as WGSL has no 8-bit types).
  bool BufferDtypeFits(const std::string& given, const ShaderArg& kernel);

  // The offset of the first byte of `source` that is not valid UTF-8 (WGSL is
  // UTF-8 text), or npos. wgpu-native converts such text lossily and naga then
  // panics (aborting the process) formatting an error at a shifted offset.
  size_t InvalidUtf8At(const std::string& source);

}  // namespace webgpu
}  // namespace modrt

#endif  // MODRT_BACKENDS_WEBGPU_WGSL_SCAN_H_
