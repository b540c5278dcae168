// The one byte serializer, function signatures, and the two payload shapes
// every device module (real or fallback) is built from and saved as.
#ifndef MODRT_PAYLOAD_H_
#define MODRT_PAYLOAD_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/abi/plugin_api.h"
#include "modrt/core/function.h"
#include "modrt/core/object.h"
#include "modrt/plugin/common.h"

namespace modrt {

// Little-endian writer. Lengths and counts are u64.
class MODRT_API ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v);
  void U64(uint64_t v);
  void Str(std::string_view s);
  std::string Finish() { return std::move(out_); }

 private:
  std::string out_;
};

// Bounds-checked reader: every overrun is a ValueError naming `what` and the
// offset, never an out-of-range read or a huge allocation.
class MODRT_API ByteReader {
 public:
  ByteReader(std::string_view data, std::string what) : data_(data), what_(std::move(what)) {}
  uint8_t U8();
  uint16_t U16();
  uint64_t U64();
  std::string Str(const char* field);
  // A count of items, each at least `min_item_bytes` long.
  uint64_t Count(const char* field, uint64_t min_item_bytes);
  void ExpectEnd() const;
  size_t offset() const { return pos_; }
  [[noreturn]] void Corrupt(const std::string& why) const;

 private:
  void Need(uint64_t n, const char* field) const;
  std::string_view data_;
  std::string what_;
  size_t pos_ = 0;
};

// "float32", "int32", "uint8", "float16", "bfloat16", "bool", ...; lanes as "float32x4".
MODRT_API DLDataType ParseDType(std::string_view text);
MODRT_API std::string DTypeToString(DLDataType dtype);
using common::operator==;

struct ArgInfo {
  DLDataType dtype;
  bool is_buffer;          // a tensor of `dtype`, passed as its device pointer
  std::string name;        // empty when the signature names none
  bool read_only = false;  // a `const` buffer: the kernel does not write it
  // A scalar the caller does not pass: its value is this launch parameter's
  // (TVM's grid-size arguments). Empty for ordinary arguments.
  std::string launch_tag;
  // "uniform dtype [name]" (is_buffer too): a uniform block of dtype's bytes
  // that the kernel reads, bound as a buffer. It takes a tensor of any
  // element type holding exactly those bytes, or host bytes (a numpy array)
  // of that size, staged into a tensor of the launch's own.
  bool uniform_block = false;

  // Bytes of a uniform block.
  size_t block_bytes() const { return dtype.bits / 8 * size_t{dtype.lanes}; }
  // Carries more than the dtype and the kind (saved in the extended encoding).
  bool extended() const { return !name.empty() || read_only || !launch_tag.empty(); }
};

// Signature text: "vadd(float32*, float32*, int32; blockIdx.x, threadIdx.x)",
// each argument optionally named and marked: "k(const float32* a, float32* b,
// int32 n, int32 grid = blockIdx.x; blockIdx.x, threadIdx.x)". `const` (buffers
// only): the kernel does not write it. `= tag` (integer scalars only): filled
// from that launch parameter, which the signature must list; the caller does
// not pass it. "uniform uint32x4 params": a uniform block of that dtype's
// bytes (ArgInfo::uniform_block). Launch tags: blockIdx.{x,y,z},
// threadIdx.{x,y,z}, dyn_shared_mem.
struct MODRT_API FunctionInfo {
  std::string name;
  std::vector<ArgInfo> args;
  std::vector<std::string> launch_tags;

  // How many values a caller passes: the arguments not filled from the
  // launch, then the launch parameters.
  size_t num_passed_args() const;

  static FunctionInfo Parse(std::string_view signature);
  std::string ToString() const;
  void Save(ByteWriter* w) const;
  static FunctionInfo Load(ByteReader* r);
};

using FunctionMap = std::map<std::string, FunctionInfo>;

enum class PayloadShape : uint8_t { kSingleBinary = 0, kMultiShader = 1 };

// What codegen produces and a device module is made from. `source` is for
// inspection only and never serialized.
class MODRT_API PayloadObj : public Object {
 public:
  int32_t type_index() const final { return kModrtObjPayload; }

  PayloadShape shape = PayloadShape::kSingleBinary;
  std::string fmt;
  FunctionMap fmap;
  std::string code;                           // single-binary
  std::map<std::string, std::string> smap;    // multi-shader: function -> bytes
  std::map<std::string, std::string> source;  // format -> text

  // [fmt][fmap][code or smap]: the bytes every module of this payload saves.
  std::string Save() const;
  static Ref<PayloadObj> Load(PayloadShape shape, std::string_view bytes, const std::string& what);
  // Text of `format` (fmt or a source format); empty format picks the code's
  // own fmt. Binary formats come back as raw bytes.
  std::string InspectSource(const std::string& format) const;
  const FunctionInfo& Function(const std::string& name) const;  // KeyError
};

using common::LaunchConfig;

// Kernel arguments marshalled once, the same way for every backend
// (common::KernelArgsBase).
struct MODRT_API KernelArgs : common::KernelArgsBase {
  // Checks count, kinds, dtypes, device type and that all buffers share one
  // device (TypeError / ValueError naming the function and the argument), then
  // fills the slots.
  static KernelArgs Pack(const FunctionInfo& info, const Args& args, DLDeviceType device_type);
};

// What KernelArgs::Pack and the plugin ABI's kernel_args_pack do: the same
// checks, writing into the caller's arrays (out->num_args entries each).
MODRT_API void PackKernelArgs(const FunctionInfo& info, const Args& args, DLDeviceType device_type,
                              ModrtKernelArgs* out);

}  // namespace modrt

#endif  // MODRT_PAYLOAD_H_
