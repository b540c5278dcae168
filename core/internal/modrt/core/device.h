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

// The optional parts of a device API's layer as this core reads them
// (plugin_api.h, device_extensions.h): each the table its plugin chained,
// read as far as its struct_size reaches (an entry it does not reach is
// null, as is one the plugin left null), and itself null when the part is
// absent: a table the plugin did not chain, or one missing an entry it must
// have. The native streams are present with `queues` (the cpu and a plugin
// of ABI 1.0 have none: the core emulates them, stream.h).
struct DeviceLayerTables {
  void* self = nullptr;  // passed back to every call
  const ModrtRangedCopyExtension* ranged_copies = nullptr;
  const ModrtDeviceAttributeExtension* attributes = nullptr;
  const ModrtStreamExtension* queues = nullptr;
  const ModrtGraphExtension* graphs = nullptr;  // only with queues
  const ModrtPinnedHostExtension* pinned_host = nullptr;
};

// One device family (cpu, cuda, opencl, ...) as the core holds it: the C
// table (plugin_api.h, ModrtDeviceApi) that its plugin registered, or the
// core's own for the cpu, with the optional tables of ABI 1.1 this core
// reads. Each call goes to the table and throws the error the table
// reported. Lives for the whole process. Every call but the first two may
// assume the device exists.
class MODRT_API DeviceAPI {
 public:
  // `table` has every function of ABI 1.0 (checked at registration).
  explicit DeviceAPI(const ModrtDeviceApi& table);
  DeviceAPI(const DeviceAPI&) = delete;
  DeviceAPI& operator=(const DeviceAPI&) = delete;

  // 0 when the driver or the device is absent; UnavailableReason says why.
  int DeviceCount() const;
  std::string UnavailableReason() const;
  // Sets `ret` to the attribute's value, or leaves it None when unknown: a
  // well-known attribute (ModrtDeviceAttr) by enum where the table has the
  // typed extension, by its name otherwise; any other name by name.
  void GetAttr(int device_id, std::string_view name, Ret* ret) const;
  void GetAttr(int device_id, ModrtDeviceAttr attr, Ret* ret) const;
  void* Alloc(int device_id, size_t nbytes) const;
  void Free(int device_id, void* ptr) const;
  // Whole-tensor copies; `tensor` lives on this API's device.
  void CopyFromHost(const void* src, DLTensor* tensor, size_t nbytes) const;
  void CopyToHost(const DLTensor* tensor, void* dst, size_t nbytes) const;
  void Sync(int device_id) const;
  // Copies of part of a tensor (`nbytes` at byte `offset` of its memory);
  // false when this API has none (the core then stages through host memory).
  bool CopyRange(const void* src, DLTensor* dst, size_t offset, size_t nbytes) const;
  bool CopyRange(const DLTensor* src, size_t offset, void* dst, size_t nbytes) const;
  // The optional parts present (null tables: absent).
  const DeviceLayerTables& layer() const { return layer_; }

 private:
  const ModrtDeviceApi t_;
  // Whole copies of the tables `layer_` points to that may be shorter than
  // this core's struct (later entries null).
  ModrtStreamExtension queues_{};
  ModrtGraphExtension graphs_{};
  DeviceLayerTables layer_;
};

// Registers `device_api.<kind>` for a copy of `table` (its `self` must
// outlive the process); ValueError when it lacks a function of ABI 1.0.
MODRT_API void RegisterDeviceAPI(const std::string& kind, const ModrtDeviceApi& table);
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
  // The same bytes as elements of `dtype` (numpy's ndarray.view(dtype)): the
  // last dimension scales by the ratio of the element sizes, which must
  // divide it; a 0-d tensor keeps its element size. The view holds `base`.
  static Ref<TensorObj> View(const Ref<TensorObj>& base, DLDataType dtype);

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
