// An out-of-tree backend for the entry-point tests: device kind "acme" on
// DLPack's kDLExtDev, two devices whose memory is host memory. It is built
// against modrt's plugin headers only, as a third-party backend would be, and
// against the frozen ABI 1.0 headers (//tests/abi:frozen_1_0_acme_plugin.so).
#include <cstdlib>
#include <cstring>

#include "modrt/plugin/plugin.h"

namespace {

using namespace modrt::plugin;  // NOLINT(build/namespaces)

class AcmeTestDeviceAPI final : public DeviceAPI {
 public:
  int DeviceCount() override { return 2; }
  std::string UnavailableReason() override { return ""; }
  void GetAttr(int device_id, std::string_view name, Ret* ret) override {
    if (name == "name") ret->SetStr(StrCat("acme", device_id));
    if (name == "cores") ret->SetInt(8 << device_id);
    if (name == "max_threads_per_block") ret->SetInt(256);
    // A well-known attribute in the wrong type, which the core refuses.
    if (name == "vendor" && device_id == 0) ret->SetInt(1);
  }
  void* Alloc(int, size_t nbytes) override { return std::malloc(nbytes == 0 ? 1 : nbytes); }
  void Free(int, void* ptr) override { std::free(ptr); }
  void CopyFromHost(const void* src, DLTensor* t, size_t nbytes) override {
    std::memcpy(static_cast<char*>(t->data) + t->byte_offset, src, nbytes);
  }
  void CopyToHost(const DLTensor* t, void* dst, size_t nbytes) override {
    std::memcpy(dst, static_cast<const char*>(t->data) + t->byte_offset, nbytes);
  }
  void Sync(int) override {}
};

void Init() {
  static AcmeTestDeviceAPI api;
  // A device-only backend: it makes no modules.
  // Fields past ABI 1.0's stay zero (this file is also built against the
  // frozen 1.0 headers): its buffers are not addresses (addressable_buffers).
  ModrtBackendIdentity identity{};
  identity.struct_size = sizeof(identity);
  identity.name = "acme";
  identity.display_name = "Acme";
  identity.device_type = kDLExtDev;
  identity.payload_shape = kModrtSingleBinary;
  identity.formats = "";
  RegisterBackend(identity);
  RegisterDeviceAPI("acme", &api);
}

}  // namespace

MODRT_DEFINE_PLUGIN(Init)
