// Modules: the unit of compiled code, with imports (child modules).
#ifndef MODRT_MODULE_H_
#define MODRT_MODULE_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "modrt/core/function.h"
#include "modrt/core/object.h"

namespace modrt {

class MODRT_API ModuleObj : public Object {
 public:
  int32_t type_index() const final { return kModrtObjModule; }

  virtual std::string kind() const = 0;
  // Null when this module has no such function.
  virtual Ref<FunctionObj> GetFunction(const std::string& name) = 0;
  virtual std::string SaveToBytes() const = 0;
  virtual std::string InspectSource(const std::string& format) const;
  // Source texts held for inspection, by format; never part of the saved bytes.
  virtual std::map<std::string, std::string> Sources() const { return {}; }
  // Names of the functions this module defines (not its imports).
  virtual std::vector<std::string> FunctionNames() const = 0;
  // True for a stand-in that holds code but cannot run it.
  virtual bool is_fallback() const { return false; }

  std::vector<Ref<ModuleObj>> imports() const;
  void Import(Ref<ModuleObj> child);

 private:
  mutable std::mutex imports_mu_;
  std::vector<Ref<ModuleObj>> imports_;
};

// Finds `name` here, then depth-first in the imports. Null when absent; a
// module that has it but cannot run it (a fallback) raises only when no
// other module in the tree has it.
MODRT_API Ref<FunctionObj> FindFunction(ModuleObj* module, const std::string& name);

// The signature of `name` as the first module of the tree (depth-first) whose
// payload declares it holds it; empty when none does (a host module's C
// function found by name, an opaque module).
MODRT_API std::string FunctionSignature(ModuleObj* module, const std::string& name);

// `module.load_from_bytes.<kind>`, with an error naming the kind, the DSO
// and the flag when no loader is registered.
MODRT_API Ref<ModuleObj> LoadModuleFromBytes(const std::string& kind, std::string_view bytes);

}  // namespace modrt

#endif  // MODRT_MODULE_H_
