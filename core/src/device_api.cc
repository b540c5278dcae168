// The device APIs as the core holds them: each one's C table (plugin_api.h,
// ModrtDeviceApi), called directly; the registry of device APIs by kind; the
// core's own cpu device, a C table like any plugin's; and the device.*
// registry functions.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "internal.h"
#include "modrt/abi/c_api.h"
#include "modrt/core/device.h"

namespace modrt {

namespace {

// The table of `type` on `t`'s chain, or null. One shorter than `min_size`
// (a later addition's table, say, cut before an entry every plugin fills) is
// taken as absent.
template <typename Extension>
const Extension* FindExtension(const ModrtDeviceApi& t, int32_t type,
                               size_t min_size = sizeof(Extension)) {
  const ModrtExtension* e = ModrtFindExtension(t.extensions, type);
  if (e == nullptr || e->struct_size < min_size) return nullptr;
  return reinterpret_cast<const Extension*>(e);
}

// `*whole` = `table` as far as its struct_size reaches, the rest null.
template <typename Extension>
const Extension* WholeCopy(const Extension* table, Extension* whole) {
  if (table == nullptr) return nullptr;
  std::memcpy(static_cast<void*>(whole), table, std::min(table->base.struct_size, sizeof(*whole)));
  whole->base.struct_size = sizeof(*whole);
  return whole;
}

// Each part present only when every entry it must have is set.
bool AllSet(std::initializer_list<const void*> entries) {
  for (const void* f : entries) {
    if (f == nullptr) return false;
  }
  return true;
}
template <typename Fn>
const void* Entry(Fn fn) {
  return reinterpret_cast<const void*>(fn);
}

const ModrtRangedCopyExtension* RangedCopy(const ModrtDeviceApi& t) {
  const auto* r = FindExtension<ModrtRangedCopyExtension>(t, kModrtExtensionRangedCopy);
  return r && AllSet({Entry(r->copy_from_host_range), Entry(r->copy_to_host_range)}) ? r : nullptr;
}

const ModrtDeviceAttributeExtension* Attributes(const ModrtDeviceApi& t) {
  const auto* a = FindExtension<ModrtDeviceAttributeExtension>(t, kModrtExtensionDeviceAttributes);
  return a && a->get_attribute ? a : nullptr;
}

const ModrtStreamExtension* Queues(const ModrtDeviceApi& t) {
  const auto* x = FindExtension<ModrtStreamExtension>(t, kModrtExtensionStreams,
                                                      MODRT_STREAM_EXTENSION_MIN_SIZE);
  if (x == nullptr) return nullptr;
  const bool complete =
      AllSet({Entry(x->stream_create), Entry(x->stream_destroy), Entry(x->stream_synchronize),
              Entry(x->event_record), Entry(x->event_query), Entry(x->event_synchronize),
              Entry(x->event_elapsed_ms), Entry(x->event_destroy), Entry(x->stream_wait_event),
              Entry(x->copy_from_host_async), Entry(x->copy_to_host_async),
              Entry(x->copy_device_to_device)});
  return complete ? x : nullptr;
}

const ModrtGraphExtension* Graphs(const ModrtDeviceApi& t) {
  const auto* x =
      FindExtension<ModrtGraphExtension>(t, kModrtExtensionGraphs, MODRT_GRAPH_EXTENSION_MIN_SIZE);
  return x && AllSet({Entry(x->graph_begin), Entry(x->graph_end), Entry(x->graph_launch),
                      Entry(x->graph_destroy)})
             ? x
             : nullptr;
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

DeviceAPI::DeviceAPI(const ModrtDeviceApi& table) : t_(table) {
  layer_.self = t_.self;
  layer_.ranged_copies = RangedCopy(t_);
  layer_.attributes = Attributes(t_);
  layer_.queues = WholeCopy(Queues(t_), &queues_);
  layer_.graphs = layer_.queues ? WholeCopy(Graphs(t_), &graphs_) : nullptr;
  layer_.pinned_host = Pinned(t_);
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
  if (layer_.attributes != nullptr) {
    CheckTableCall(layer_.attributes->get_attribute(t_.self, device_id, attr, &value));
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
  if (layer_.ranged_copies == nullptr) return false;
  CheckTableCall(layer_.ranged_copies->copy_from_host_range(t_.self, src, dst, offset, nbytes));
  return true;
}

bool DeviceAPI::CopyRange(const DLTensor* src, size_t offset, void* dst, size_t nbytes) const {
  if (layer_.ranged_copies == nullptr) return false;
  CheckTableCall(layer_.ranged_copies->copy_to_host_range(t_.self, src, offset, dst, nbytes));
  return true;
}

}  // namespace modrt
