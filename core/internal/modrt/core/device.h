// Device APIs and tensors.
#ifndef MODRT_DEVICE_H_
#define MODRT_DEVICE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "modrt/core/function.h"
#include "modrt/core/object.h"

namespace modrt {

// One device family (cpu, cuda, opencl, ...). Implementations live for the
// whole process. Every method but the first two may assume the device exists.
class MODRT_API DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  // 0 when the driver or the device is absent; UnavailableReason says why.
  virtual int DeviceCount() = 0;
  virtual std::string UnavailableReason() = 0;
  // Sets `ret` to the attribute's value, or leaves it None when unknown.
  // Common names: name, max_threads_per_block, warp_size,
  // max_shared_memory_per_block, compute_version, multi_processor_count.
  virtual void GetAttr(int device_id, std::string_view name, Ret* ret) = 0;
  virtual void* Alloc(int device_id, size_t nbytes) = 0;
  virtual void Free(int device_id, void* ptr) = 0;
  // Whole-tensor copies; `tensor` lives on this API's device.
  virtual void CopyFromHost(const void* src, DLTensor* tensor, size_t nbytes) = 0;
  virtual void CopyToHost(const DLTensor* tensor, void* dst, size_t nbytes) = 0;
  virtual void Sync(int device_id) = 0;
  // Copies of part of a tensor (`nbytes` at byte `offset` of its memory);
  // false when this API has none (the core then stages through host memory).
  virtual bool CopyRange(const void*, DLTensor*, size_t, size_t) { return false; }
  virtual bool CopyRange(const DLTensor*, size_t, void*, size_t) { return false; }
};

// Registers `device_api.<kind>`; `api` must outlive the process.
MODRT_API void RegisterDeviceAPI(const std::string& kind, DeviceAPI* api);
// Throws ValueError naming the kind and what provides it when absent.
MODRT_API DeviceAPI* GetDeviceAPI(DLDeviceType type);
// Throws ValueError unless `device` exists, with the backend's reason.
MODRT_API DeviceAPI* GetExistingDeviceAPI(DLDevice device);

// The memory figures of `device`'s pool (bytes in use, peak, cached, the
// device's total where the backend reports it), for out-of-memory messages.
MODRT_API std::string MemorySummary(DLDevice device);

// Device kind name ("cpu", or the backend registered first with `type`, see
// backend.h) of a DLPack device type; null if unknown.
MODRT_API const char* DeviceKindName(DLDeviceType type);

// A DLPack tensor whose memory is owned by a device API or by a DLPack producer.
class MODRT_API TensorObj : public Object {
 public:
  ~TensorObj() override;
  int32_t type_index() const final { return kModrtObjTensor; }
  DLTensor* dl() { return &dl_; }
  size_t nbytes() const;
  // Memory a producer exported read-only (DLPACK_FLAG_BITMASK_READ_ONLY).
  bool read_only() const { return read_only_; }
  // Bytes of guard zone after the data (and, on cpu, before it): allocated in
  // checked mode (MODRT_CHECK=bounds), 0 otherwise.
  size_t guard_bytes() const { return guard_; }
  DeviceAPI* device_api() const { return api_; }

  static Ref<TensorObj> Empty(std::vector<int64_t> shape, DLDataType dtype, DLDevice device);
  // Adopts a producer's tensor (legacy or DLPack >= 1.0): the tensor calls the
  // producer's deleter when it dies, and on every failure path before throwing.
  // A tensor that is not compact row-major is refused, unless `copy` is set and
  // its memory is host memory: then it is copied into a new compact CPU tensor
  // (and the producer's is released at once).
  static Ref<TensorObj> FromDLPack(DLManagedTensor* managed, bool copy = false);
  static Ref<TensorObj> FromDLPackVersioned(DLManagedTensorVersioned* managed, bool copy = false);

 private:
  static Ref<TensorObj> Adopt(const DLTensor& src, std::function<void()> release, bool read_only,
                              bool copy);

  DLTensor dl_{};
  std::vector<int64_t> shape_;
  DeviceAPI* api_ = nullptr;       // owner of data, when allocated here
  std::function<void()> release_;  // the producer's deleter, when from DLPack
  bool read_only_ = false;
  size_t guard_ = 0;
};

MODRT_API size_t TensorBytes(const DLTensor& t);
MODRT_API bool IsContiguous(const DLTensor& t);

}  // namespace modrt

#endif  // MODRT_DEVICE_H_
