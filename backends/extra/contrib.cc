// libmodrt_runtime_extra.so: contrib functions that need no device driver,
// loaded by the autoloader when present.
//
//   contrib.sort.argsort(values, indices)    stable ascending argsort of a 1-D
//                                             CPU tensor, NaN last (as numpy)
//   contrib.random.uniform(out, seed, low, high)
//                                             fills a CPU float tensor; element i
//                                             depends only on (seed, i), so results
//                                             do not depend on how work is split
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "modrt/plugin/plugin.h"

namespace {

using namespace modrt::plugin;  // NOLINT(build/namespaces)

DLTensor* CpuTensor(const Args& a, int i, const char* func, const char* what) {
  DLTensor* t = a.Tensor(i);
  if (t->device.device_type != kDLCPU) {
    Fail("ValueError", func, ": ", what, " must be a cpu tensor, got one on ",
         DeviceKindName(t->device.device_type));
  }
  if (!IsContiguous(*t)) Fail("ValueError", func, ": ", what, " must be contiguous");
  return t;
}

int64_t NumElements(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

template <typename T>
const T* DataOf(const DLTensor& t) {
  return reinterpret_cast<const T*>(static_cast<const char*>(t.data) + t.byte_offset);
}

template <typename T>
void StableArgsort(const DLTensor& values, int64_t* out, int64_t n) {
  const T* v = DataOf<T>(values);
  std::iota(out, out + n, int64_t{0});
  std::stable_sort(out, out + n, [v](int64_t x, int64_t y) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v[x])) return false;
      if (std::isnan(v[y])) return true;
    }
    return v[x] < v[y];
  });
}

void Argsort(const Args& a, Ret*) {
  constexpr const char* kFunc = "contrib.sort.argsort";
  a.ExpectCount(2, kFunc);
  DLTensor* values = CpuTensor(a, 0, kFunc, "values");
  DLTensor* indices = CpuTensor(a, 1, kFunc, "indices");
  if (values->ndim != 1)
    Fail("ValueError", kFunc, ": values must be 1-D, got ", values->ndim, "-D");
  if (indices->dtype.code != kDLInt || indices->dtype.bits != 64 || indices->dtype.lanes != 1) {
    Fail("TypeError", kFunc, ": indices must be int64, got ", DTypeToString(indices->dtype));
  }
  const int64_t n = values->shape[0];
  if (NumElements(*indices) != n) {
    Fail("ValueError", kFunc, ": indices has ", NumElements(*indices), " elements, values ", n);
  }
  auto* out = reinterpret_cast<int64_t*>(static_cast<char*>(indices->data) + indices->byte_offset);
  const DLDataType t = values->dtype;
  if (t.lanes == 1 && t.code == kDLFloat && t.bits == 32)
    return StableArgsort<float>(*values, out, n);
  if (t.lanes == 1 && t.code == kDLFloat && t.bits == 64)
    return StableArgsort<double>(*values, out, n);
  if (t.lanes == 1 && t.code == kDLInt && t.bits == 32)
    return StableArgsort<int32_t>(*values, out, n);
  if (t.lanes == 1 && t.code == kDLInt && t.bits == 64)
    return StableArgsort<int64_t>(*values, out, n);
  Fail("TypeError", kFunc, ": values of dtype ", DTypeToString(t),
       " are not supported (float32, float64, int32, int64)");
}

// SplitMix64: a counter-based generator, so element i needs no state from i-1.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <typename T>
void FillUniform(DLTensor* out, uint64_t seed, double low, double high) {
  T* data = reinterpret_cast<T*>(static_cast<char*>(out->data) + out->byte_offset);
  const uint64_t key = Mix(seed);
  const int64_t n = NumElements(*out);
  for (int64_t i = 0; i < n; ++i) {
    // 53 random bits -> [0, 1); the cast to T may round up to `high`, so clamp.
    double unit = static_cast<double>(Mix(key ^ static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    T value = static_cast<T>(low + (high - low) * unit);
    data[i] = value < static_cast<T>(high)
                  ? value
                  : std::nextafter(static_cast<T>(high), static_cast<T>(low));
  }
}

void Uniform(const Args& a, Ret*) {
  constexpr const char* kFunc = "contrib.random.uniform";
  a.ExpectCount(4, kFunc);
  DLTensor* out = CpuTensor(a, 0, kFunc, "out");
  const auto seed = static_cast<uint64_t>(a.Int(1));
  const double low = a.Float(2), high = a.Float(3);
  if (!(low < high) || !std::isfinite(low) || !std::isfinite(high)) {
    Fail("ValueError", kFunc, ": need finite low < high, got [", low, ", ", high, ")");
  }
  const DLDataType t = out->dtype;
  if (t.lanes == 1 && t.code == kDLFloat && t.bits == 32)
    return FillUniform<float>(out, seed, low, high);
  if (t.lanes == 1 && t.code == kDLFloat && t.bits == 64)
    return FillUniform<double>(out, seed, low, high);
  Fail("TypeError", kFunc, ": out must be float32 or float64, got ", DTypeToString(t));
}

void Init() {
  RegisterGlobal("contrib.sort.argsort", Argsort);
  RegisterGlobal("contrib.random.uniform", Uniform);
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
