#include "elf_check.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

#include "modrt/core/object.h"

namespace modrt {
namespace {

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Shdr = ElfW(Shdr);
using Dyn = ElfW(Dyn);
using Addr = ElfW(Addr);

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr int kMachine = EM_386;
#elif defined(__arm__)
constexpr int kMachine = EM_ARM;
#elif defined(__riscv)
constexpr int kMachine = EM_RISCV;
#elif defined(__powerpc64__)
constexpr int kMachine = EM_PPC64;
#elif defined(__s390x__)
constexpr int kMachine = EM_S390;
#else
#error "modrt's ELF check does not know this machine's e_machine"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr int kData = ELFDATA2LSB;
#else
constexpr int kData = ELFDATA2MSB;
#endif

constexpr int kClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

// Reads `n` bytes at `offset` into `out`; false when the source ends first.
using ReadAt = std::function<bool(uint64_t offset, size_t n, void* out)>;

// [offset, offset + length) lies inside [0, size), without overflow.
bool Within(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// Thrown inside Check(), turned into its result: the first problem found.
struct Problem {
  std::string why;
};

template <typename... T>
[[noreturn]] void Refuse(const T&... parts) {
  throw Problem{StrCat(parts...)};
}

class Checker {
 public:
  Checker(uint64_t size, ReadAt read) : size_(size), read_(std::move(read)) {}

  void Run() {
    CheckHeader();
    CheckProgramHeaders();
    CheckDynamic();
    CheckSectionHeaders();
  }

 private:
  template <typename T>
  void Read(uint64_t offset, T* out, const char* what) {
    if (!Within(offset, sizeof(T), size_) || !read_(offset, sizeof(T), out)) {
      Refuse("truncated: ", what, " at byte ", offset, " lies past the end of the file (", size_,
             " bytes)");
    }
  }

  void CheckHeader() {
    unsigned char magic[SELFMAG];
    if (size_ < SELFMAG || !read_(0, SELFMAG, magic) || std::memcmp(magic, ELFMAG, SELFMAG) != 0) {
      Refuse("not an ELF file (no ELF magic at byte 0)");
    }
    if (size_ < sizeof(Ehdr)) {
      Refuse("truncated: the ELF header needs ", sizeof(Ehdr), " bytes, the file has ", size_);
    }
    Read(0, &eh_, "the ELF header");
    if (eh_.e_ident[EI_CLASS] != kClass) {
      Refuse("ELF class ", int(eh_.e_ident[EI_CLASS]), " does not match this ",
             kClass == ELFCLASS64 ? "64-bit process (ELFCLASS64)" : "32-bit process (ELFCLASS32)");
    }
    if (eh_.e_ident[EI_DATA] != kData)
      Refuse("byte order ", int(eh_.e_ident[EI_DATA]), " is not this machine's");
    if (eh_.e_ident[EI_VERSION] != EV_CURRENT || eh_.e_version != EV_CURRENT) {
      Refuse("unknown ELF version ", int(eh_.e_ident[EI_VERSION]), "/", eh_.e_version);
    }
    if (eh_.e_type != ET_DYN) Refuse("ELF type ", eh_.e_type, " is not a shared object (ET_DYN)");
    if (eh_.e_machine != kMachine) {
      Refuse("built for machine ", eh_.e_machine, ", this process runs on machine ", kMachine);
    }
    if (eh_.e_ehsize != sizeof(Ehdr))
      Refuse("ELF header size ", eh_.e_ehsize, " is not ", sizeof(Ehdr));
  }

  void CheckProgramHeaders() {
    if (eh_.e_phentsize != sizeof(Phdr)) {
      Refuse("program header size ", eh_.e_phentsize, " is not ", sizeof(Phdr));
    }
    if (eh_.e_phnum == 0 || eh_.e_phnum == PN_XNUM)
      Refuse("no program headers (", eh_.e_phnum, ")");
    const uint64_t table = uint64_t{eh_.e_phnum} * sizeof(Phdr);
    if (!Within(eh_.e_phoff, table, size_)) {
      Refuse("truncated: the program header table (", table, " bytes at byte ", eh_.e_phoff,
             ") ends past the end of the file (", size_, " bytes)");
    }
    phdrs_.resize(eh_.e_phnum);
    if (!read_(eh_.e_phoff, table, phdrs_.data()))
      Refuse("could not read the program header table");
    Addr previous_end = 0;
    int dynamics = 0;
    for (size_t i = 0; i < phdrs_.size(); ++i) {
      const Phdr& p = phdrs_[i];
      if (p.p_type == PT_DYNAMIC) ++dynamics;
      if (p.p_type != PT_LOAD) continue;
      if (!Within(p.p_offset, p.p_filesz, size_)) {
        Refuse("truncated: segment ", i, " (PT_LOAD, ", p.p_filesz, " bytes at byte ", p.p_offset,
               ") ends past the end of the file (", size_, " bytes)");
      }
      if (p.p_filesz > p.p_memsz) {
        Refuse("segment ", i, " (PT_LOAD) has more bytes in the file (", p.p_filesz,
               ") than in memory (", p.p_memsz, ")");
      }
      if (p.p_vaddr + p.p_memsz < p.p_vaddr)
        Refuse("segment ", i, " (PT_LOAD) wraps around the address space");
      if (p.p_align > 1) {
        if ((p.p_align & (p.p_align - 1)) != 0)
          Refuse("segment ", i, " alignment ", p.p_align, " is not a power of two");
        if (p.p_vaddr % p.p_align != p.p_offset % p.p_align) {
          Refuse("segment ", i, " address and file offset disagree modulo its alignment");
        }
      }
      if (!loads_.empty() && p.p_vaddr < previous_end) {
        Refuse("segment ", i, " (PT_LOAD) overlaps or precedes the one before it");
      }
      if (!loads_.empty() && p.p_offset < loads_.back().p_offset + loads_.back().p_filesz) {
        Refuse("segment ", i, " (PT_LOAD) maps file bytes that the one before it maps too");
      }
      // Every segment is read by the loader or the code; zero fill (.bss)
      // past the file bytes is written, so only a writable segment has it.
      if (!(p.p_flags & PF_R))
        Refuse("segment ", i, " (PT_LOAD) is not readable (flags ", p.p_flags, ")");
      if (p.p_memsz > p.p_filesz && !(p.p_flags & PF_W)) {
        Refuse("segment ", i, " (PT_LOAD) is read-only but has ", p.p_memsz - p.p_filesz,
               " bytes of zero fill past its file bytes");
      }
      previous_end = p.p_vaddr + p.p_memsz;
      loads_.push_back(p);
    }
    if (loads_.empty()) Refuse("no loadable segment (PT_LOAD)");
    if (std::none_of(loads_.begin(), loads_.end(),
                     [](const Phdr& p) { return p.p_flags & PF_X; })) {
      Refuse("no executable segment: the code would not run");
    }
    if (dynamics > 1) Refuse(dynamics, " dynamic segments (PT_DYNAMIC); a shared object has one");
    for (size_t i = 0; i < phdrs_.size(); ++i) {
      const Phdr& p = phdrs_[i];
      // What the loader reads through the mapped image must be mapped from the file.
      // (PT_DYNAMIC: CheckDynamic says more.)
      if ((p.p_type == PT_GNU_RELRO || p.p_type == PT_NOTE || p.p_type == PT_GNU_EH_FRAME ||
           p.p_type == PT_TLS || p.p_type == PT_INTERP) &&
          p.p_filesz > 0 && FileBacked(p.p_vaddr, p.p_filesz) == nullptr) {
        Refuse("segment ", i, " (type ", p.p_type, ", ", p.p_filesz, " bytes at address ",
               p.p_vaddr, ") is not inside a loaded part of the file");
      }
      // The loader makes RELRO read-only after relocating: all of it must be
      // in this object's writable memory, or mprotect hits other mappings.
      if (p.p_type == PT_GNU_RELRO && p.p_memsz > 0 && !Mapped(p.p_vaddr, p.p_memsz, PF_W)) {
        Refuse("segment ", i, " (PT_GNU_RELRO, ", p.p_memsz, " bytes at address ", p.p_vaddr,
               ") is not inside a writable loaded segment");
      }
      if (p.p_type != PT_LOAD && p.p_filesz > 0 && !Within(p.p_offset, p.p_filesz, size_)) {
        Refuse("truncated: segment ", i, " (type ", p.p_type, ") ends past the end of the file");
      }
    }
  }

  // The PT_LOAD whose file-backed bytes hold [addr, addr + n), or null.
  const Phdr* FileBacked(Addr addr, uint64_t n) const {
    for (const Phdr& p : loads_) {
      if (addr >= p.p_vaddr && Within(addr - p.p_vaddr, n, p.p_filesz)) return &p;
    }
    return nullptr;
  }

  // [addr, addr + n) is mapped (file bytes or zero fill) by one PT_LOAD
  // that has all of `flags`.
  bool Mapped(Addr addr, uint64_t n, ElfW(Word) flags = 0) const {
    for (const Phdr& p : loads_) {
      if (addr >= p.p_vaddr && Within(addr - p.p_vaddr, n, p.p_memsz) &&
          (p.p_flags & flags) == flags)
        return true;
    }
    return false;
  }

  void CheckDynamic() {
    const Phdr* dynamic = nullptr;
    for (const Phdr& p : phdrs_) {
      if (p.p_type == PT_DYNAMIC) dynamic = &p;
    }
    if (dynamic == nullptr) return;  // a static-pie-like object: nothing for the loader to follow
    const Phdr* load = FileBacked(dynamic->p_vaddr, dynamic->p_filesz);
    if (load == nullptr || dynamic->p_offset - load->p_offset != dynamic->p_vaddr - load->p_vaddr) {
      Refuse("the dynamic section (", dynamic->p_filesz, " bytes at byte ", dynamic->p_offset,
             ") is not inside the segment that loads it");
    }
    std::vector<Dyn> entries;
    bool terminated = false;
    for (uint64_t off = 0; off + sizeof(Dyn) <= dynamic->p_filesz; off += sizeof(Dyn)) {
      Dyn d;
      Read(dynamic->p_offset + off, &d, "a dynamic entry");
      if (d.d_tag == DT_NULL) {
        terminated = true;
        break;
      }
      entries.push_back(d);
    }
    if (!terminated) Refuse("the dynamic section has no DT_NULL terminator inside its segment");

    auto value = [&](ElfW(Sxword) tag, uint64_t* out) {
      for (const Dyn& d : entries) {
        if (d.d_tag == tag) {
          *out = d.d_un.d_val;
          return true;
        }
      }
      return false;
    };
    // Address tags the loader follows, with the tag that sizes them (0: none).
    struct Ranged {
      ElfW(Sxword) tag, size_tag;
      const char* name;
    };
    static const Ranged kRanged[] = {
        {DT_STRTAB, DT_STRSZ, "DT_STRTAB"},
        {DT_SYMTAB, 0, "DT_SYMTAB"},
        {DT_HASH, 0, "DT_HASH"},
        {DT_GNU_HASH, 0, "DT_GNU_HASH"},
        {DT_RELA, DT_RELASZ, "DT_RELA"},
        {DT_REL, DT_RELSZ, "DT_REL"},
        {DT_JMPREL, DT_PLTRELSZ, "DT_JMPREL"},
        {DT_INIT, 0, "DT_INIT"},
        {DT_FINI, 0, "DT_FINI"},
        {DT_INIT_ARRAY, DT_INIT_ARRAYSZ, "DT_INIT_ARRAY"},
        {DT_FINI_ARRAY, DT_FINI_ARRAYSZ, "DT_FINI_ARRAY"},
        {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, "DT_PREINIT_ARRAY"},
        {DT_VERSYM, 0, "DT_VERSYM"},
        {DT_VERDEF, 0, "DT_VERDEF"},
        {DT_VERNEED, 0, "DT_VERNEED"},
        {DT_PLTGOT, 0, "DT_PLTGOT"},
#ifdef DT_RELR
        {DT_RELR, DT_RELRSZ, "DT_RELR"},
#endif
    };
    for (const Ranged& r : kRanged) {
      uint64_t addr = 0, n = 1;
      if (!value(r.tag, &addr)) continue;
      if (r.size_tag != 0 && !value(r.size_tag, &n)) Refuse(r.name, " without its size entry");
      if (FileBacked(addr, n) == nullptr) {
        Refuse(r.name, " (", n, " bytes at address ", addr,
               ") is outside the loaded parts of the file");
      }
    }
    uint64_t entsize = 0;
    if (value(DT_SYMENT, &entsize) && entsize != sizeof(ElfW(Sym)))
      Refuse("DT_SYMENT ", entsize, " is not ", sizeof(ElfW(Sym)));
    if (value(DT_RELAENT, &entsize) && entsize != sizeof(ElfW(Rela)))
      Refuse("DT_RELAENT ", entsize, " is not ", sizeof(ElfW(Rela)));
    if (value(DT_RELENT, &entsize) && entsize != sizeof(ElfW(Rel)))
      Refuse("DT_RELENT ", entsize, " is not ", sizeof(ElfW(Rel)));

    CheckRelocationTargets(value);

    // Names the loader reads from the string table: inside it and NUL-terminated there.
    uint64_t strtab = 0, strsz = 0;
    const bool has_strings = value(DT_STRTAB, &strtab) && value(DT_STRSZ, &strsz);
    std::string strings;
    for (const Dyn& d : entries) {
      if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME && d.d_tag != DT_RPATH &&
          d.d_tag != DT_RUNPATH)
        continue;
      if (!has_strings) Refuse("a library name in the dynamic section, but no string table");
      if (strings.empty()) strings = ReadMapped(strtab, strsz, "the dynamic string table");
      if (d.d_un.d_val >= strsz || strings.find('\0', d.d_un.d_val) == std::string::npos) {
        Refuse("a library name at string offset ", d.d_un.d_val, " runs outside the string table (",
               strsz, " bytes)");
      }
    }
  }

  // The bytes at [addr, addr + n) of the image, which FileBacked() holds.
  std::string ReadMapped(Addr addr, uint64_t n, const char* what) {
    const Phdr* holder = FileBacked(addr, n);
    if (holder == nullptr) Refuse(what, " is outside the loaded parts of the file");
    std::string bytes(n, '\0');
    if (!read_(holder->p_offset + (addr - holder->p_vaddr), n, bytes.data()))
      Refuse("could not read ", what);
    return bytes;
  }

  // The loader writes every relocation's target: each must lie in writable
  // memory of this object (unless it asks for text relocations).
  template <typename Value>
  void CheckRelocationTargets(const Value& value) {
    uint64_t flags = 0, ignored = 0;
    if (value(DT_TEXTREL, &ignored) || (value(DT_FLAGS, &flags) && (flags & DF_TEXTREL))) return;
    auto target = [&](Addr where, const char* table) {
      if (!Mapped(where, sizeof(Addr), PF_W)) {
        Refuse("a relocation in ", table, " writes to address ", where,
               ", outside this object's writable memory");
      }
    };
    auto table = [&](ElfW(Sxword) tag, ElfW(Sxword) size_tag, bool rela, const char* name) {
      uint64_t addr = 0, n = 0;
      if (!value(tag, &addr) || !value(size_tag, &n)) return;
      const size_t entry = rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
      const std::string bytes = ReadMapped(addr, n, name);
      for (size_t off = 0; off + entry <= bytes.size(); off += entry) {
        Addr where;  // r_offset leads both Rel and Rela
        std::memcpy(&where, bytes.data() + off, sizeof(where));
        target(where, name);
      }
    };
    table(DT_RELA, DT_RELASZ, true, "DT_RELA");
    table(DT_REL, DT_RELSZ, false, "DT_REL");
    uint64_t pltrel = DT_RELA;
    value(DT_PLTREL, &pltrel);
    table(DT_JMPREL, DT_PLTRELSZ, pltrel == DT_RELA, "DT_JMPREL");
#ifdef DT_RELR
    uint64_t addr = 0, n = 0;
    if (value(DT_RELR, &addr) && value(DT_RELRSZ, &n)) {
      const std::string bytes = ReadMapped(addr, n, "DT_RELR");
      Addr where = 0;
      for (size_t off = 0; off + sizeof(Addr) <= bytes.size(); off += sizeof(Addr)) {
        Addr entry;
        std::memcpy(&entry, bytes.data() + off, sizeof(entry));
        if ((entry & 1) == 0) {  // an address, then the words a bitmap marks after it
          where = entry;
          target(where, "DT_RELR");
          where += sizeof(Addr);
          continue;
        }
        for (unsigned bit = 1; bit < 8 * sizeof(Addr); ++bit) {
          if ((entry >> bit) & 1) target(where + (bit - 1) * sizeof(Addr), "DT_RELR");
        }
        where += (8 * sizeof(Addr) - 1) * sizeof(Addr);
      }
    }
#endif
  }

  void CheckSectionHeaders() {
    if (eh_.e_shoff == 0) {
      if (eh_.e_shnum != 0) Refuse(eh_.e_shnum, " section headers at byte 0");
      return;
    }
    if (eh_.e_shentsize != sizeof(Shdr)) {
      Refuse("section header size ", eh_.e_shentsize, " is not ", sizeof(Shdr));
    }
    Shdr first;
    Read(eh_.e_shoff, &first, "the section header table");
    // More than SHN_LORESERVE sections: the count is in the first header.
    const uint64_t count = eh_.e_shnum != 0 ? eh_.e_shnum : first.sh_size;
    if (count > size_ / sizeof(Shdr) || !Within(eh_.e_shoff, count * sizeof(Shdr), size_)) {
      Refuse("truncated: the section header table (", count, " headers at byte ", eh_.e_shoff,
             ") ends past the end of the file (", size_, " bytes)");
    }
    const uint64_t strndx = eh_.e_shstrndx == SHN_XINDEX ? first.sh_link : eh_.e_shstrndx;
    if (strndx != SHN_UNDEF && strndx >= count) {
      Refuse("section name table index ", strndx, " is not one of the ", count, " sections");
    }
    for (uint64_t i = 0; i < count; ++i) {
      Shdr s;
      Read(eh_.e_shoff + i * sizeof(Shdr), &s, "a section header");
      if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL) continue;
      if (!Within(s.sh_offset, s.sh_size, size_)) {
        Refuse("truncated: section ", i, " (", s.sh_size, " bytes at byte ", s.sh_offset,
               ") ends past the end of the file (", size_, " bytes)");
      }
      // The linker put every loaded section's bytes where a segment maps
      // them; a segment whose offset or address moved maps other bytes.
      if ((s.sh_flags & SHF_ALLOC) && s.sh_size > 0) {
        const Phdr* holder = FileBacked(s.sh_addr, s.sh_size);
        if (holder == nullptr || holder->p_offset + (s.sh_addr - holder->p_vaddr) != s.sh_offset) {
          Refuse("section ", i, " (", s.sh_size, " bytes at byte ", s.sh_offset, ", address ",
                 s.sh_addr, ") is not where the program headers load it");
        }
      }
    }
  }

  const uint64_t size_;
  const ReadAt read_;
  Ehdr eh_{};
  std::vector<Phdr> phdrs_;
  std::vector<Phdr> loads_;
};

std::string Check(uint64_t size, ReadAt read) {
  try {
    Checker(size, std::move(read)).Run();
    return "";
  } catch (const Problem& p) {
    return p.why;
  }
}

}  // namespace

std::string ElfImageProblem(std::string_view image) {
  return Check(image.size(), [image](uint64_t offset, size_t n, void* out) {
    if (!Within(offset, n, image.size())) return false;
    std::memcpy(out, image.data() + offset, n);
    return true;
  });
}

std::string ElfFileProblem(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return StrCat("cannot open it: ", std::strerror(errno));
  struct stat st{};
  std::string problem;
  if (fstat(fd, &st) != 0) {
    problem = StrCat("cannot stat it: ", std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if (st.st_size == 0) {
    problem = "empty file";
  } else {
    problem = Check(static_cast<uint64_t>(st.st_size), [fd](uint64_t offset, size_t n, void* out) {
      auto* dst = static_cast<char*>(out);
      while (n > 0) {
        ssize_t got = pread(fd, dst, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        dst += got;
        offset += static_cast<uint64_t>(got);
        n -= static_cast<size_t>(got);
      }
      return true;
    });
  }
  close(fd);
  return problem;
}

std::string ElfSharedObjectProblem(std::string_view image, const std::string& display_name,
                                   int elf_class, int machine, const std::string& machine_name) {
  const size_t header = elf_class == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
  if (image.size() < header || image.substr(0, SELFMAG) != std::string_view(ELFMAG, SELFMAG)) {
    return "a " + display_name + " module must be an ELF shared object; got " +
           std::to_string(image.size()) + " bytes that are not one";
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
  // e_type and e_machine sit at the same offsets in both classes.
  const int type = bytes[16] | bytes[17] << 8;
  const int found = bytes[18] | bytes[19] << 8;
  if (bytes[EI_CLASS] != elf_class || bytes[EI_DATA] != ELFDATA2LSB || found != machine) {
    return "the module's ELF object is not for " + display_name + " (machine " +
           std::to_string(found) + ", expected " + std::to_string(machine) + " for " +
           machine_name + ")";
  }
  if (type != ET_DYN) {
    return "the " + display_name + " ELF object is not a shared object (type " +
           std::to_string(type) + ")";
  }
  return "";
}

}  // namespace modrt
