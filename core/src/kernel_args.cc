// Kernel arguments marshalled once for every backend: each argument checked
// against the signature and packed in its C type, then the launch parameters.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "internal.h"
#include "modrt/core/backend.h"
#include "modrt/core/device.h"
#include "modrt/core/payload.h"
#include "stream.h"

namespace modrt {

namespace {

// Whether device addresses of `type` are plain pointers, so a byte offset
// can be added to one: the core's cpu memory, or what the backend's identity
// says. Asked only for a tensor with a byte offset.
bool BuffersAddressable(DLDeviceType type) {
  if (type == kDLCPU) return true;
  const BackendInfo* backend = FindBackendOfDeviceType(type);
  return backend != nullptr && backend->addressable_buffers;
}

std::string IntText(__int128 v) {
  if (v < 0) return "-" + IntText(-v);
  std::string text;
  do {
    text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return text;
}

// The shortest text that reads back as `v` (Python's repr of a float).
std::string ShortestText(double v) {
  char text[32];
  const std::to_chars_result r = std::to_chars(text, text + sizeof(text), v);
  return std::string(text, r.ptr);
}

// "argument 2" or, where the signature names it, "argument 'n'".
std::string ArgLabel(size_t i, const ArgInfo& a) {
  return a.name.empty() ? StrCat("argument ", i) : StrCat("argument '", a.name, "'");
}

// A scalar argument being packed. Its description is written only when it is
// refused: a launch that packs its scalars builds no text.
struct ScalarArg {
  const std::string& kernel;
  size_t index;
  const ArgInfo& info;
  // "k: argument 'n' (int32)"
  std::string What() const {
    return StrCat(kernel, ": ", ArgLabel(index, info), " (", DTypeToString(info.dtype), ")");
  }
};

std::string RangeText(__int128 lo, __int128 hi) {
  return StrCat("[", IntText(lo), ", ", IntText(hi), "]");
}

// The exact value of an integer argument: int64, a flagged unsigned 64-bit
// value, or a failure for an integer too wide for 64 bits (ModrtNumberFlag).
__int128 ExactInt(const ScalarArg& arg, const Args& args, int32_t idx, __int128 lo, __int128 hi) {
  const ModrtValue& v = args[idx];
  if (v.type_code == kModrtFloat && v.reserved == kModrtNumberWideInt) {
    Fail("OverflowError", arg.What(), " must be in ", RangeText(lo, hi),
         ", got an integer beyond 64 bits");
  }
  if (v.type_code == kModrtInt && v.reserved == kModrtNumberUnsigned64) {
    uint64_t u;
    std::memcpy(&u, &v.v_int64, sizeof(u));
    return u;
  }
  try {
    return args.Int(idx);
  } catch (const Error& e) {
    Fail("TypeError", arg.What(), ": ", e.what());
  }
}

// Checks the caller's value args[idx] against the range of its dtype and
// stores it in its C type: nothing is wrapped, truncated or rounded to an
// infinity.
void PackScalar(const ScalarArg& arg, const Args& args, int32_t idx, uint64_t* slot) {
  const DLDataType dt = arg.info.dtype;
  auto store = [&](auto value) { std::memcpy(slot, &value, sizeof(value)); };
  if (dt.code == kDLInt || dt.code == kDLUInt || dt.code == kDLBool) {
    const bool is_signed = dt.code == kDLInt;
    const __int128 one = 1;
    const __int128 lo = dt.code == kDLBool ? 0 : is_signed ? -(one << (dt.bits - 1)) : 0;
    const __int128 hi = dt.code == kDLBool ? 1
                        : is_signed        ? (one << (dt.bits - 1)) - 1
                                           : (one << dt.bits) - 1;
    const __int128 v = ExactInt(arg, args, idx, lo, hi);
    if (v < lo || v > hi) {
      Fail("OverflowError", arg.What(), " must be in ", RangeText(lo, hi), ", got ", IntText(v));
    }
    const uint64_t bits = static_cast<uint64_t>(v);  // two's complement of a value in range
    if (dt.bits == 8) store(static_cast<uint8_t>(bits));
    else if (dt.bits == 16) store(static_cast<uint16_t>(bits));
    else if (dt.bits == 32) store(static_cast<uint32_t>(bits));
    else store(bits);
    return;
  }
  if (dt.code != kDLFloat || (dt.bits != 16 && dt.bits != 32 && dt.bits != 64)) {
    Fail("TypeError", arg.kernel, ": scalar ", ArgLabel(arg.index, arg.info), " of dtype ",
         DTypeToString(dt), " is not supported");
  }
  double v = 0;
  try {
    v = args.Float(idx);
  } catch (const Error& e) {
    Fail("TypeError", arg.What(), ": ", e.what());
  }
  const double max = dt.bits == 16   ? 65504.0
                     : dt.bits == 32 ? static_cast<double>(std::numeric_limits<float>::max())
                                     : std::numeric_limits<double>::max();
  auto overflow = [&] {
    Fail("OverflowError", arg.What(), " must be in [", ShortestText(-max), ", ", ShortestText(max),
         "] or inf/nan, got ", ShortestText(v));
  };
  // An integer beyond 64 bits arrives as its nearest double, an infinity if none.
  const ModrtValue& raw = args[idx];
  if (std::isinf(v) && raw.reserved == kModrtNumberWideInt) overflow();
  if (dt.bits == 64) return store(v);
  if (dt.bits == 32) {
    const float f = static_cast<float>(v);
    if (std::isinf(f) && !std::isinf(v)) overflow();
    return store(f);
  }
  const _Float16 h = static_cast<_Float16>(v);
  if (std::isinf(static_cast<double>(h)) && !std::isinf(v)) overflow();
  store(h);
}

// The value of launch parameter `tag`, value `idx` of a call: an int, at
// least 1 (0 for dyn_shared_mem).
int64_t LaunchParameter(const FunctionInfo& info, const std::string& tag, const Args& args,
                        int32_t idx) {
  int64_t v = 0;
  try {
    v = args.Int(idx);
  } catch (const Error& e) {
    Fail("TypeError", info.name, ": launch parameter ", tag, ": ", e.what());
  }
  if (v < (tag == "dyn_shared_mem" ? 0 : 1)) {
    Fail("ValueError", info.name, ": launch parameter ", tag, " must be ",
         tag == "dyn_shared_mem" ? ">= 0" : ">= 1", ", got ", v);
  }
  return v;
}

// Refuses launch parameter value `v` (>= 1) for argument `a`, filled from it,
// when a's dtype cannot hold it.
void CheckFilledFromLaunchParameter(const FunctionInfo& info, const ArgInfo& a, int64_t v) {
  const int value_bits = a.dtype.bits - (a.dtype.code == kDLInt ? 1 : 0);
  if (value_bits < 63 && static_cast<uint64_t>(v) >> value_bits != 0) {
    Fail("OverflowError", info.name, ": argument '", a.name, "' (", DTypeToString(a.dtype),
         ") is filled from ", a.launch_tag, " = ", v, ", which it cannot hold");
  }
}

}  // namespace

std::string UniformBlockLabel(const std::string& kernel, size_t index, const ArgInfo& a) {
  return StrCat(kernel, ": ", ArgLabel(index, a), " is a uniform block of ", a.block_bytes(),
                " bytes");
}

void PackKernelArgs(const FunctionInfo& info, const Args& args, DLDeviceType device_type,
                    ModrtKernelArgs* k) {
  const size_t nargs = info.args.size();
  const size_t expected = info.num_passed_args();
  // Arguments the caller passes (those filled from the launch are not).
  const size_t npassed = expected - info.launch_tags.size();
  if (static_cast<size_t>(args.size()) != expected) {
    Fail("TypeError", info.name, " takes ", npassed, " argument", npassed == 1 ? "" : "s", " and ",
         info.launch_tags.size(), " launch parameter", info.launch_tags.size() == 1 ? "" : "s",
         " (", info.ToString(), "), got ", args.size(), " values");
  }
  if (k->num_args != static_cast<int64_t>(nargs)) {
    Fail("ValueError", info.name, ": kernel argument arrays of ", k->num_args, " entries for ",
         nargs, " arguments");
  }
  if (std::string forked = ForkedDeviceProblem(DLDevice{device_type, 0}); !forked.empty()) {
    Fail("RuntimeError", info.name, ": ", forked);
  }
  std::fill(k->slots, k->slots + nargs, 0);
  std::fill(k->buffers, k->buffers + nargs, nullptr);
  for (int d = 0; d < 3; ++d) k->grid[d] = k->block[d] = 1;
  k->dyn_shared_bytes = 0;
  k->device_id = 0;
  bool seen_buffer = false;
  int32_t idx = -1;  // the caller's value for argument i
  for (size_t i = 0; i < nargs; ++i) {
    const ArgInfo& a = info.args[i];
    if (!a.launch_tag.empty()) continue;  // filled below, from the launch
    ++idx;
    if (a.is_buffer) {
      const ModrtValue& v = args[idx];
      if (v.type_code != kModrtDLTensorPtr &&
          !(v.type_code == kModrtObject && v.v_obj != nullptr &&
            static_cast<Object*>(v.v_obj)->type_index() == kModrtObjTensor)) {
        if (a.uniform_block) {
          Fail("TypeError", UniformBlockLabel(info.name, i, a), ": pass a tensor or an array of ",
               a.block_bytes(), " bytes, got ", ValueTypeName(v));
        }
        const bool host_bytes = v.type_code == kModrtObject && v.v_obj != nullptr &&
                                static_cast<Object*>(v.v_obj)->type_index() == kModrtObjBytes;
        Fail("TypeError", info.name, ": argument ", i, " must be a tensor of ",
             DTypeToString(a.dtype), ", got ", ValueTypeName(v),
             host_bytes ? " (an array passes as its bytes to a uniform block only; "
                          "modrt.tensor(array, device) copies one to the device)"
                        : "");
      }
      const DLTensor* t = args.Tensor(idx);
      if (a.uniform_block) {
        // Any element type: the block is bytes.
        if (TensorBytes(*t) != a.block_bytes()) {
          Fail("ValueError", UniformBlockLabel(info.name, i, a), ", got a tensor of ",
               TensorBytes(*t), " bytes (", DTypeToString(t->dtype), ")");
        }
      } else if (!(t->dtype == a.dtype)) {
        Fail("TypeError", info.name, ": argument ", i, " must be a tensor of ",
             DTypeToString(a.dtype), ", got a tensor of ", DTypeToString(t->dtype));
      }
      if (t->device.device_type != device_type) {
        const char* kind = DeviceKindName(t->device.device_type);
        Fail("ValueError", info.name, ": argument ", i, " lives on ",
             kind ? kind : "an unknown device", ", but this kernel runs on ",
             DeviceKindName(device_type));
      }
      if (t->byte_offset != 0 && !BuffersAddressable(device_type)) {
        Fail("ValueError", info.name, ": argument ", i,
             " has a byte offset, which this device's buffers cannot express");
      }
      if (!seen_buffer) {
        seen_buffer = true;
        k->device_id = t->device.device_id;
      } else if (t->device.device_id != k->device_id) {
        Fail("ValueError", info.name, ": argument ", i, " lives on ", DeviceKindName(device_type),
             "(", t->device.device_id, "), but earlier buffers on ", DeviceKindName(device_type),
             "(", k->device_id, ")");
      }
      if (!a.read_only && v.type_code == kModrtObject &&
          static_cast<const TensorObj*>(v.v_obj)->read_only()) {
        Fail("ValueError", info.name, ": ", ArgLabel(i, a),
             " is a read-only tensor, but the kernel may write it (neither the kernel nor its "
             "signature declares it const); pass a writable copy, or mark it const in the "
             "signature if the kernel does not write it");
      }
      char* ptr = static_cast<char*>(t->data) + t->byte_offset;
      std::memcpy(&k->slots[i], &ptr, sizeof(ptr));
      k->sizes[i] = sizeof(void*);
      k->buffers[i] = t;
      continue;
    }
    const DLDataType dt = a.dtype;
    const size_t bytes = (dt.bits / 8) * dt.lanes;
    if (dt.lanes != 1 || bytes == 0 || bytes > 8) {
      Fail("TypeError", info.name, ": scalar argument ", i, " of dtype ", DTypeToString(dt),
           " is not supported");
    }
    k->sizes[i] = bytes;
    PackScalar(ScalarArg{info.name, i, a}, args, idx, &k->slots[i]);
  }
  for (size_t i = 0; i < nargs; ++i) k->ptrs[i] = &k->slots[i];
  for (size_t j = 0; j < info.launch_tags.size(); ++j) {
    const std::string& tag = info.launch_tags[j];
    const int64_t v = LaunchParameter(info, tag, args, static_cast<int32_t>(npassed + j));
    if (tag == "dyn_shared_mem") {
      k->dyn_shared_bytes = v;
    } else {
      int axis = tag.back() - 'x';
      (tag[0] == 'b' ? k->grid : k->block)[axis] = v;
    }
  }
  for (size_t i = 0; i < nargs; ++i) {
    const ArgInfo& a = info.args[i];
    if (a.launch_tag.empty()) continue;
    const int axis = a.launch_tag.back() - 'x';
    const int64_t v = (a.launch_tag[0] == 'b' ? k->grid : k->block)[axis];  // >= 1
    CheckFilledFromLaunchParameter(info, a, v);
    k->sizes[i] = a.dtype.bits / 8;
    std::memcpy(&k->slots[i], &v, sizeof(v));  // little-endian: the low bytes are the value
  }
  if (MODRT_STRUCT_HAS(ModrtKernelArgs, k, capturing)) {
    // Where the launch goes (ABI 1.2): the plugin need not ask (current_stream).
    StreamState& stream = StreamFor(DLDevice{device_type, k->device_id});
    const GraphObj* graph = stream.capture();
    k->stream = stream.native_stream();
    k->capturing = graph != nullptr && graph->capturing_natively() ? 1 : 0;
  }
}

void CheckScalarValue(const FunctionInfo& info, const Args& args, int32_t passed) {
  const size_t npassed = info.num_passed_args() - info.launch_tags.size();
  if (static_cast<size_t>(passed) >= npassed) {
    const std::string& tag = info.launch_tags.at(passed - npassed);
    const int64_t v = LaunchParameter(info, tag, args, passed);
    for (const ArgInfo& a : info.args) {
      if (a.launch_tag == tag) CheckFilledFromLaunchParameter(info, a, v);
    }
    return;
  }
  int32_t idx = -1;
  for (size_t i = 0; i < info.args.size(); ++i) {
    const ArgInfo& a = info.args[i];
    if (!a.launch_tag.empty() || ++idx != passed) continue;
    if (a.is_buffer) {
      Fail("TypeError", info.name, ": ", ArgLabel(i, a), " is a tensor argument, not a scalar");
    }
    uint64_t slot = 0;
    return PackScalar(ScalarArg{info.name, i, a}, args, passed, &slot);
  }
}

KernelArgs KernelArgs::Pack(const FunctionInfo& info, const Args& args, DLDeviceType device_type) {
  KernelArgs k;
  k.Fill(info.args.size(), [&](ModrtKernelArgs* c) { PackKernelArgs(info, args, device_type, c); });
  return k;
}

}  // namespace modrt
