// Reference-counted objects, errors and the value helpers shared by the core
// and backend plugins. Everything here is compiled into libmodrt_runtime.so;
// plugins use it through this header (same ABI version, see c_api.h).
#ifndef MODRT_OBJECT_H_
#define MODRT_OBJECT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "modrt/abi/c_api.h"
#include "modrt/plugin/common.h"

namespace modrt {

// An error with a kind that Python maps to an exception class
// ("ValueError", "TypeError", "KeyError", "RuntimeError", ...).
class MODRT_API Error : public std::runtime_error {
 public:
  Error(std::string kind, const std::string& message)
      : std::runtime_error(message), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

using common::StrCat;

template <typename... Parts>
[[noreturn]] void Fail(const char* kind, const Parts&... parts) {
  throw Error(kind, StrCat(parts...));
}

// Runs `body`, turning any exception into -1 plus the thread-local message:
// the one place where C++ errors become C ABI return codes.
template <typename Body>
int GuardCall(Body&& body) noexcept {
  return common::GuardCall<Error>(std::forward<Body>(body), ModrtSetLastError);
}

class MODRT_API Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;
  virtual int32_t type_index() const = 0;

  void IncRef() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  std::atomic<int32_t> refs_{0};
};

// Intrusive strong reference.
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}  // NOLINT(runtime/explicit)
  explicit Ref(T* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->IncRef();
  }
  Ref(const Ref& other) : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  Ref(const Ref<U>& other) : Ref(other.get()) {}  // NOLINT(runtime/explicit)
  ~Ref() {
    if (ptr_) ptr_->DecRef();
  }
  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }

  // Hands the reference to a C caller (ModrtValue ownership convention).
  T* release() { return std::exchange(ptr_, nullptr); }
  // Adopts a reference already counted for us (from a C return value).
  static Ref Adopt(T* ptr) {
    Ref r(ptr);
    if (ptr) ptr->DecRef();
    return r;
  }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> MakeObject(Args&&... args) {
  auto owned = std::make_unique<T>(std::forward<Args>(args)...);
  return Ref<T>(owned.release());
}

// Immutable string or byte array.
class MODRT_API BytesObj : public Object {
 public:
  BytesObj(std::string data, bool is_string) : data_(std::move(data)), is_string_(is_string) {}
  int32_t type_index() const final { return is_string_ ? kModrtObjString : kModrtObjBytes; }
  const std::string& data() const { return data_; }

 private:
  std::string data_;
  bool is_string_;
};

// Checked downcast by type index (no RTTI across DSOs).
template <typename T>
T* ObjectAs(Object* obj, int32_t type_index, const char* what) {
  if (obj == nullptr || obj->type_index() != type_index) {
    Fail("TypeError", "expected a ", what);
  }
  return static_cast<T*>(obj);
}

}  // namespace modrt

#endif  // MODRT_OBJECT_H_
