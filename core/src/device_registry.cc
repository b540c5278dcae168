// The registry of device APIs by kind, the core's own cpu device (a C
// device table, like any plugin's), and the device.* registry functions.
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "internal.h"
#include "modrt/abi/c_api.h"
#include "modrt/core/backend.h"
#include "modrt/core/device.h"
#include "stream.h"

namespace modrt {

namespace {

// A device kind is the core's cpu, or the name of the backend registered
// first with its DLPack device type.
int DeviceTypeOfKind(std::string_view kind) {
  if (kind == "cpu") return kDLCPU;
  const BackendInfo* b = FindBackend(std::string(kind));
  if (b == nullptr || FindBackendOfDeviceType(b->device_type) != b) return -1;
  return b->device_type;
}

}  // namespace

const char* DeviceKindName(DLDeviceType type) {
  if (type == kDLCPU) return "cpu";
  const BackendInfo* b = FindBackendOfDeviceType(type);
  return b == nullptr ? nullptr : b->name.c_str();  // registry entries live for the process
}

namespace {

constexpr int kMaxDeviceType = 64;
// Registered APIs never go away, so lookups are cached without a lock.
std::array<std::atomic<DeviceAPI*>, kMaxDeviceType> api_cache{};

DeviceAPI* LookupDeviceAPI(DLDeviceType type) {
  if (type < 0 || type >= kMaxDeviceType) return nullptr;
  if (DeviceAPI* api = api_cache[type].load(std::memory_order_acquire)) return api;
  const char* kind = DeviceKindName(type);
  if (kind == nullptr) return nullptr;
  Ref<FunctionObj> f = GetGlobal(std::string("device_api.") + kind);
  if (!f) return nullptr;
  OwnedValue ret;
  f->Call(nullptr, 0, ret.out());
  if (ret.value().type_code != kModrtOpaquePtr) return nullptr;
  auto* api = static_cast<DeviceAPI*>(ret.value().v_ptr);
  api_cache[type].store(api, std::memory_order_release);
  return api;
}

std::string MissingApiReason(DLDeviceType type) {
  const char* kind = DeviceKindName(type);
  if (kind == nullptr) return StrCat("unknown device type ", int(type));
  const BackendInfo* b = FindBackend(kind);
  if (b == nullptr) return StrCat("no device API is registered for device kind '", kind, "'");
  return StrCat(b->display_name, " runtime ", b->RuntimeLibrary(),
                " is not loaded (build with --//backends:", b->name, "=on)");
}

void Require(const void* fn, const char* field) {
  if (fn == nullptr) Fail("ValueError", "the device API table has no ", field, " function");
}

// The cpu device: host memory, one device, every call synchronous.
int CpuGetAttribute(void*, int32_t, int32_t attr, ModrtValue* value) {
  return GuardCall([&] {
    Ret ret(value);
    if (attr == kModrtDeviceAttrName) ret.SetStr("cpu");
    if (attr == kModrtDeviceAttrTotalMemory) {
      ret.SetInt(static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE));
    }
    if (attr == kModrtDeviceAttrComputeUnits) ret.SetInt(sysconf(_SC_NPROCESSORS_ONLN));
  });
}

const ModrtDeviceAttributeExtension kCpuAttributes = {
    {sizeof(ModrtDeviceAttributeExtension), kModrtExtensionDeviceAttributes, nullptr},
    CpuGetAttribute,
};

const ModrtDeviceApi kCpuDeviceApi = {
    sizeof(ModrtDeviceApi),
    nullptr,
    [](void*, int32_t* out) {
      *out = 1;
      return 0;
    },
    [](void*, ModrtObjectHandle* out) { return ModrtBytesCreate("", 0, 1, out); },
    // No named attributes beyond the well-known ones.
    [](void*, int32_t, const char*, ModrtValue* value) {
      value->type_code = kModrtNone;
      return 0;
    },
    [](void*, int32_t id, size_t nbytes, void** out) {
      return GuardCall([&] {
        constexpr size_t kAlign = 64;
        *out = std::aligned_alloc(kAlign,
                                  (std::max<size_t>(nbytes, 1) + kAlign - 1) / kAlign * kAlign);
        if (*out == nullptr) {
          Fail("MemoryError", "cpu(", id, "): cannot allocate ", nbytes, " bytes of host memory");
        }
      });
    },
    [](void*, int32_t, void* ptr) {
      std::free(ptr);
      return 0;
    },
    [](void*, const void* src, DLTensor* t, size_t nbytes) {
      std::memcpy(static_cast<char*>(t->data) + t->byte_offset, src, nbytes);
      return 0;
    },
    [](void*, const DLTensor* t, void* dst, size_t nbytes) {
      std::memcpy(dst, static_cast<const char*>(t->data) + t->byte_offset, nbytes);
      return 0;
    },
    [](void*, int32_t) { return 0; },
    &kCpuAttributes.base,
};

}  // namespace

void RegisterDeviceAPI(const std::string& kind, const ModrtDeviceApi& table) {
  Require(reinterpret_cast<const void*>(table.device_count), "device_count");
  Require(reinterpret_cast<const void*>(table.unavailable_reason), "unavailable_reason");
  Require(reinterpret_cast<const void*>(table.get_attr), "get_attr");
  Require(reinterpret_cast<const void*>(table.alloc), "alloc");
  Require(reinterpret_cast<const void*>(table.free), "free");
  Require(reinterpret_cast<const void*>(table.copy_from_host), "copy_from_host");
  Require(reinterpret_cast<const void*>(table.copy_to_host), "copy_to_host");
  Require(reinterpret_cast<const void*>(table.sync), "sync");
  // Device APIs live for the process, like the plugin that registered them.
  DeviceAPI* api = std::make_unique<DeviceAPI>(table).release();
  RegisterGlobal("device_api." + kind, [api](const Args&, Ret* r) { r->SetPtr(api); });
}

DeviceAPI* GetDeviceAPI(DLDeviceType type) {
  if (DeviceAPI* api = LookupDeviceAPI(type)) return api;
  Fail("ValueError", MissingApiReason(type));
}

DeviceAPI* GetExistingDeviceAPI(DLDevice device) {
  NoteDeviceOpened(device);
  DeviceAPI* api = GetDeviceAPI(device.device_type);
  int count = api->DeviceCount();
  if (device.device_id < 0 || device.device_id >= count) {
    std::string why = count == 0 ? api->UnavailableReason()
                                 : StrCat("device index ", device.device_id, " out of range (",
                                          count, " device", count == 1 ? "" : "s", ")");
    Fail("ValueError", DeviceKindName(device.device_type), "(", device.device_id,
         ") does not exist: ", why);
  }
  return api;
}

namespace {

MODRT_STATIC_INIT([] {
  RegisterDeviceAPI("cpu", kCpuDeviceApi);

  // The DLPack device type of a kind name, or -1 when no backend defines it.
  RegisterGlobal("device.type_of_kind", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.type_of_kind");
    r->SetInt(DeviceTypeOfKind(a.Str(0)));
  });
  RegisterGlobal("device.kind_name", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.kind_name");
    const char* kind = DeviceKindName(static_cast<DLDeviceType>(a.Int(0)));
    if (kind == nullptr) Fail("ValueError", "unknown device type ", a.Int(0));
    r->SetStr(kind);
  });
  RegisterGlobal("device.count", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.count");
    DeviceAPI* api = LookupDeviceAPI(static_cast<DLDeviceType>(a.Int(0)));
    r->SetInt(api ? api->DeviceCount() : 0);
  });
  // Empty when the device exists, else why it does not.
  RegisterGlobal("device.unavailable_reason", [](const Args& a, Ret* r) {
    a.ExpectCount(1, "device.unavailable_reason");
    DLDevice dev = a.Device(0);
    DeviceAPI* api = LookupDeviceAPI(dev.device_type);
    if (api == nullptr) return r->SetStr(MissingApiReason(dev.device_type));
    if (std::string forked = ForkedDeviceProblem(dev); !forked.empty()) return r->SetStr(forked);
    int count = api->DeviceCount();
    if (count == 0) return r->SetStr(api->UnavailableReason());
    if (dev.device_id < 0 || dev.device_id >= count) {
      return r->SetStr(StrCat("device index ", dev.device_id, " out of range (", count, " device",
                              count == 1 ? "" : "s", ")"));
    }
    r->SetStr("");
  });
  // device.attr(device, name): a well-known attribute (ModrtDeviceAttr) by
  // its name, or one of the backend's own.
  RegisterGlobal("device.attr", [](const Args& a, Ret* r) {
    a.ExpectCount(2, "device.attr");
    DLDevice dev = a.Device(0);
    GetExistingDeviceAPI(dev)->GetAttr(dev.device_id, a.Str(1), r);
  });
  // The names of the well-known attributes, one a line, in enum order.
  RegisterGlobal("device.attribute_names", [](const Args& a, Ret* r) {
    a.ExpectCount(0, "device.attribute_names");
    std::string names;
    for (int32_t attr = MODRT_DEVICE_ATTR_FIRST; attr <= MODRT_DEVICE_ATTR_LAST; ++attr) {
      names += StrCat(ModrtDeviceAttrInfoOf(attr)->name, "\n");
    }
    r->SetStr(names);
  });
  // After the device's streams are complete (modrt.Device.sync waits for them
  // with a bound first): the backend's own sync.
  RegisterGlobal("device.sync", [](const Args& a, Ret*) {
    a.ExpectCount(1, "device.sync");
    DLDevice dev = a.Device(0);
    DeviceAPI* api = GetExistingDeviceAPI(dev);
    WaitForStreams(dev);
    WaitRegion waiting;
    api->Sync(dev.device_id);
  });
});

}  // namespace
}  // namespace modrt
