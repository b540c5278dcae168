// Cross-compiling for CUDA where no CUDA runtime exists: a C++ program links
// modrt's core and @modrt//backends/cuda:fallback alone (no
// libmodrt_compiler.so, no libmodrt_runtime_cuda.so), creates a module from a
// PTX payload, and gets the fallback: same kind and bytes, refuses to launch.
// It is an embedder: it includes the C API (modrt/abi/c_api.h) only and
// reaches the core through its global functions, as the Python package does.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "modrt/abi/c_api.h"

namespace {

constexpr char kPtx[] = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry scale(.param .u64 x, .param .u32 n) { ret; }
)";

int failures = 0;

void Expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

// A value returned by the core: releases its object when it goes.
class Owned {
 public:
  Owned() { value_.type_code = kModrtNone; }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& other) noexcept : value_(std::exchange(other.value_, ModrtValue{})) {}
  ~Owned() {
    if (value_.type_code == kModrtObject && value_.v_obj != nullptr) {
      ModrtObjectRelease(value_.v_obj);
    }
  }
  // Takes over an object the caller owns.
  static Owned Adopt(ModrtObjectHandle obj) {
    Owned r;
    r.value_.type_code = kModrtObject;
    r.value_.v_obj = obj;
    return r;
  }
  ModrtValue* out() { return &value_; }
  const ModrtValue& value() const { return value_; }
  ModrtValue arg() const { return value_; }  // borrowed by the callee
  std::string bytes() const {
    const char* data = nullptr;
    size_t size = 0;
    if (value_.type_code != kModrtObject || ModrtBytesGet(value_.v_obj, &data, &size) != 0) {
      return std::string();
    }
    return std::string(data, size);
  }

 private:
  ModrtValue value_;
};

ModrtValue Str(const char* text) {
  ModrtValue v{};
  v.type_code = kModrtRawStr;
  v.v_str = text;
  return v;
}

// A bytes object holding `data`.
Owned Bytes(const std::string& data) {
  ModrtObjectHandle obj = nullptr;
  if (ModrtBytesCreate(data.data(), data.size(), 0, &obj) != 0) {
    std::printf("FAILED: bytes: %s\n", ModrtGetLastError());
    std::exit(EXIT_FAILURE);
  }
  return Owned::Adopt(obj);
}

// Calls global `name`; on failure, `*error` is the core's message.
Owned Call(const char* name, std::vector<ModrtValue> args, std::string* error = nullptr) {
  Owned result;
  ModrtObjectHandle f = nullptr;
  if (ModrtGetGlobal(name, &f) != 0 || f == nullptr) {
    std::printf("FAILED: no global %s\n", name);
    std::exit(EXIT_FAILURE);
  }
  const int status =
      ModrtFunctionCall(f, args.data(), static_cast<int32_t>(args.size()), result.out());
  ModrtObjectRelease(f);
  if (status != 0) {
    if (error == nullptr) {
      std::printf("FAILED: %s: %s\n", name, ModrtGetLastError());
      std::exit(EXIT_FAILURE);
    }
    *error = ModrtGetLastError();
  }
  return result;
}

}  // namespace

int main() {
  Owned payload = Call("payload.new", {Str("single-binary"), Str("ptx")});
  Call("payload.set_code", {payload.arg(), Bytes(kPtx).arg()});
  Call("payload.add_function",
       {payload.arg(), Str("scale(float32*, int32; blockIdx.x, threadIdx.x)")});

  ModrtObjectHandle create = nullptr;
  Expect(ModrtGetGlobal("codegen.cuda.create_module", &create) == 0 && create != nullptr,
         "codegen.cuda.create_module is registered by the fallback library");
  if (create == nullptr) return EXIT_FAILURE;
  ModrtObjectRelease(create);
  Owned module = Call("codegen.cuda.create_module", {payload.arg()});

  Expect(Call("module.kind", {module.arg()}).bytes() == "cuda", "the module's kind is cuda");
  Expect(Call("module.is_fallback", {module.arg()}).value().v_int64 == 1,
         "it is the fallback (no CUDA runtime in this process)");
  const std::string saved = Call("module.save_to_bytes", {module.arg()}).bytes();
  Expect(saved == Call("payload.save", {payload.arg()}).bytes(),
         "it saves exactly the payload's bytes");
  Expect(Call("module.inspect_source", {module.arg(), Str("ptx")}).bytes() == kPtx,
         "its PTX is inspectable");

  std::string error;
  Call("module.get_function", {module.arg(), Str("scale")}, &error);
  Expect(error.find("CUDA runtime is not linked into this build") != std::string::npos,
         "get_function refuses to launch, naming the missing runtime");

  error.clear();
  Call("module.load_from_bytes", {Str("cuda"), Bytes(saved).arg()}, &error);
  Expect(error.find("cuda") != std::string::npos,
         "loading the bytes needs the CUDA runtime, and says so");
  std::printf("  (%s)\n", error.c_str());
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
