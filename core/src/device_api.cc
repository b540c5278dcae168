// The device APIs as the core holds them: each one's C table (plugin_api.h,
// ModrtDeviceApi), called directly; the registry of device APIs by kind; the
// core's own cpu device, a C table like any plugin's; and the device.*
// registry functions.
#include <string>
#include <string_view>

#include "internal.h"
#include "modrt/abi/c_api.h"
#include "modrt/core/device.h"

namespace modrt {

namespace {

// The optional tables of ABI 1.1 that this core reads, each used only when
// complete (every function set). A table may be shorter than this core's
// struct when it predates later additions (`min_size`); those are read only
// where its struct_size covers them.
template <typename Extension>
const Extension* FindExtension(const ModrtDeviceApi& t, int32_t type,
                               size_t min_size = sizeof(Extension)) {
  const ModrtExtension* e = ModrtFindExtension(t.extensions, type);
  if (e == nullptr || e->struct_size < min_size) return nullptr;
  return reinterpret_cast<const Extension*>(e);
}

const ModrtRangedCopyExtension* RangedCopy(const ModrtDeviceApi& t) {
  const auto* r = FindExtension<ModrtRangedCopyExtension>(t, kModrtExtensionRangedCopy);
  return r && r->copy_from_host_range && r->copy_to_host_range ? r : nullptr;
}

const ModrtDeviceAttributeExtension* Attributes(const ModrtDeviceApi& t) {
  const auto* a = FindExtension<ModrtDeviceAttributeExtension>(t, kModrtExtensionDeviceAttributes);
  return a && a->get_attribute ? a : nullptr;
}

const ModrtStreamExtension* Streams(const ModrtDeviceApi& t) {
  const auto* x = FindExtension<ModrtStreamExtension>(t, kModrtExtensionStreams,
                                                      MODRT_STREAM_EXTENSION_MIN_SIZE);
  if (x == nullptr) return nullptr;
  const void* fns[] = {reinterpret_cast<const void*>(x->stream_create),
                       reinterpret_cast<const void*>(x->stream_destroy),
                       reinterpret_cast<const void*>(x->stream_synchronize),
                       reinterpret_cast<const void*>(x->event_record),
                       reinterpret_cast<const void*>(x->event_query),
                       reinterpret_cast<const void*>(x->event_synchronize),
                       reinterpret_cast<const void*>(x->event_elapsed_ms),
                       reinterpret_cast<const void*>(x->event_destroy),
                       reinterpret_cast<const void*>(x->stream_wait_event),
                       reinterpret_cast<const void*>(x->copy_from_host_async),
                       reinterpret_cast<const void*>(x->copy_to_host_async),
                       reinterpret_cast<const void*>(x->copy_device_to_device)};
  for (const void* f : fns) {
    if (f == nullptr) return nullptr;
  }
  return x;
}

const ModrtGraphExtension* Graphs(const ModrtDeviceApi& t) {
  const auto* x =
      FindExtension<ModrtGraphExtension>(t, kModrtExtensionGraphs, MODRT_GRAPH_EXTENSION_MIN_SIZE);
  return x && x->graph_begin && x->graph_end && x->graph_launch && x->graph_destroy ? x : nullptr;
}

const ModrtPinnedHostExtension* Pinned(const ModrtDeviceApi& t) {
  const auto* x = FindExtension<ModrtPinnedHostExtension>(t, kModrtExtensionPinnedHost);
  return x && x->host_alloc && x->host_free ? x : nullptr;
}

// The well-known attribute called `name`; 0 when none is.
int32_t AttrOfName(std::string_view name) {
  for (int32_t attr = MODRT_DEVICE_ATTR_FIRST; attr <= MODRT_DEVICE_ATTR_LAST; ++attr) {
    if (name == ModrtDeviceAttrInfoOf(attr)->name) return attr;
  }
  return 0;
}

// A device API's answer for a well-known attribute must have its declared type.
void CheckAttrType(ModrtDeviceAttr attr, const ModrtValue& value) {
  const ModrtDeviceAttrInfo* info = ModrtDeviceAttrInfoOf(attr);
  if (value.type_code == kModrtNone) return;
  const bool is_string =
      value.type_code == kModrtObject && ModrtObjectTypeIndex(value.v_obj) == kModrtObjString;
  if (info->is_string ? is_string : value.type_code == kModrtInt) return;
  if (value.type_code == kModrtObject) ModrtObjectRelease(value.v_obj);
  Fail("TypeError", "the device API answered attribute '", info->name,
       "' with a value of type code ", value.type_code, "; it is declared ",
       info->is_string ? "a string" : "an integer");
}

}  // namespace

DeviceAPI::DeviceAPI(const ModrtDeviceApi& table)
    : t_(table), ranged_(RangedCopy(t_)), attributes_(Attributes(t_)) {
  native_.self = t_.self;
  native_.streams = Streams(t_);
  native_.graphs = native_.streams ? Graphs(t_) : nullptr;
  if (const ModrtStreamExtension* x = native_.streams) {
    if (MODRT_STRUCT_HAS(ModrtStreamExtension, &x->base, stream_adopt)) {
      native_.stream_adopt = x->stream_adopt;
    }
    if (MODRT_STRUCT_HAS(ModrtStreamExtension, &x->base, queue_description)) {
      native_.queue_description = x->queue_description;
    }
    if (MODRT_STRUCT_HAS(ModrtStreamExtension, &x->base, stream_wait_for)) {
      native_.stream_wait_for = x->stream_wait_for;
    }
  }
  if (const ModrtGraphExtension* x = native_.graphs) {
    if (MODRT_STRUCT_HAS(ModrtGraphExtension, &x->base, graph_update)) {
      native_.graph_update = x->graph_update;
    }
  }
  pinned_.self = t_.self;
  pinned_.ext = Pinned(t_);
}

int DeviceAPI::DeviceCount() const {
  int32_t n = 0;
  CheckTableCall(t_.device_count(t_.self, &n));
  return n;
}

std::string DeviceAPI::UnavailableReason() const {
  ModrtObjectHandle out = nullptr;
  CheckTableCall(t_.unavailable_reason(t_.self, &out));
  Ref<Object> obj = Ref<Object>::Adopt(static_cast<Object*>(out));
  if (!obj || (obj->type_index() != kModrtObjString && obj->type_index() != kModrtObjBytes)) {
    Fail("TypeError", "unavailable_reason returned no string");
  }
  return static_cast<BytesObj*>(obj.get())->data();
}

void DeviceAPI::GetAttr(int device_id, std::string_view name, Ret* ret) const {
  if (const int32_t attr = AttrOfName(name); attr != 0) {
    return GetAttr(device_id, static_cast<ModrtDeviceAttr>(attr), ret);
  }
  ModrtValue value{};
  value.type_code = kModrtNone;
  CheckTableCall(t_.get_attr(t_.self, device_id, std::string(name).c_str(), &value));
  ret->Adopt(value);
}

void DeviceAPI::GetAttr(int device_id, ModrtDeviceAttr attr, Ret* ret) const {
  ModrtValue value{};
  value.type_code = kModrtNone;
  if (attributes_ != nullptr) {
    CheckTableCall(attributes_->get_attribute(t_.self, device_id, attr, &value));
  } else {  // ABI 1.0: by the attribute's name
    CheckTableCall(t_.get_attr(t_.self, device_id, ModrtDeviceAttrInfoOf(attr)->name, &value));
  }
  CheckAttrType(attr, value);
  ret->Adopt(value);
}

void* DeviceAPI::Alloc(int device_id, size_t nbytes) const {
  void* out = nullptr;
  CheckTableCall(t_.alloc(t_.self, device_id, nbytes, &out));
  return out;
}

void DeviceAPI::Free(int device_id, void* ptr) const {
  CheckTableCall(t_.free(t_.self, device_id, ptr));
}

void DeviceAPI::CopyFromHost(const void* src, DLTensor* tensor, size_t nbytes) const {
  CheckTableCall(t_.copy_from_host(t_.self, src, tensor, nbytes));
}

void DeviceAPI::CopyToHost(const DLTensor* tensor, void* dst, size_t nbytes) const {
  CheckTableCall(t_.copy_to_host(t_.self, tensor, dst, nbytes));
}

void DeviceAPI::Sync(int device_id) const { CheckTableCall(t_.sync(t_.self, device_id)); }

bool DeviceAPI::CopyRange(const void* src, DLTensor* dst, size_t offset, size_t nbytes) const {
  if (ranged_ == nullptr) return false;
  CheckTableCall(ranged_->copy_from_host_range(t_.self, src, dst, offset, nbytes));
  return true;
}

bool DeviceAPI::CopyRange(const DLTensor* src, size_t offset, void* dst, size_t nbytes) const {
  if (ranged_ == nullptr) return false;
  CheckTableCall(ranged_->copy_to_host_range(t_.self, src, offset, dst, nbytes));
  return true;
}

const NativeQueues* NativeQueuesOf(DeviceAPI* api) { return api->native(); }

const PinnedHost* PinnedHostOf(DeviceAPI* api) { return api->pinned(); }

}  // namespace modrt
