// The check every shared object passes before modrt hands it to dlopen.
// glibc's loader trusts its file: a segment past the end of a truncated file
// is mapped anyway and touching it raises SIGBUS, and corrupted headers send
// it reading or writing through wild addresses. This catches what can be told
// from the headers without running anything.
#ifndef MODRT_CORE_SRC_ELF_CHECK_H_
#define MODRT_CORE_SRC_ELF_CHECK_H_

#include <string>
#include <string_view>

namespace modrt {

// What is wrong with the shared object in `image` for this process, or ""
// when dlopen may be given it.
std::string ElfImageProblem(std::string_view image);

// The same for the file at `path`, read with pread (never mapped, so a file
// cut short cannot fault here); also "" only for a regular, readable file.
std::string ElfFileProblem(const std::string& path);

// What is wrong with `image` as a little-endian ELF shared object of class
// `elf_class` (ELFCLASS32 or ELFCLASS64) for e_machine `machine`, or "": the
// one check of the device shared objects a module carries (a Hexagon module:
// `display_name` "Hexagon", machine 164, `machine_name` "QDSP6"). The core
// registers it as elf.shared_object_problem for runtimes and codegen alike.
std::string ElfSharedObjectProblem(std::string_view image, const std::string& display_name,
                                   int elf_class, int machine, const std::string& machine_name);

}  // namespace modrt

#endif  // MODRT_CORE_SRC_ELF_CHECK_H_
