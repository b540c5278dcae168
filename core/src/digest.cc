// SHA-256 through libsodium (already linked for signed artifacts): artifact
// integrity, and installed runtime DSOs checked against the digest recorded
// for them before dlopen (the build's manifest, or a wheel's RECORD).
//
// A DSO's check is cached by file identity (device, inode, size, mtime and
// ctime, which any write changes) in a small file under the user's cache
// directory, so that `import modrt` hashes each DSO once, not at every import.
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "internal.h"
#include "modrt/core/artifact.h"
#include "modrt/core/function.h"

namespace modrt {

namespace {

void InitSodiumOnce() {
  static const int status = sodium_init();
  if (status < 0) Fail("RuntimeError", "libsodium failed to initialize; cannot compute SHA-256");
}

// Lowercase hex SHA-256 of the file at `path`, or "" with `error` set.
std::string FileSha256Hex(const std::string& path, std::string* error) {
  InitSodiumOnce();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot be read";
    return "";
  }
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  std::vector<unsigned char> buffer(1 << 16);
  for (;;) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      close(fd);
      *error = "cannot be read";
      return "";
    }
    if (n == 0) break;
    crypto_hash_sha256_update(&state, buffer.data(), static_cast<unsigned long long>(n));
  }
  close(fd);
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  return Hex(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

// MODRT_CACHE_DIR, else $XDG_CACHE_HOME/modrt, else ~/.cache/modrt ("" if none).
std::string CacheFile() {
  std::string dir;
  if (const char* d = std::getenv("MODRT_CACHE_DIR"); d != nullptr && *d != '\0') {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    dir = StrCat(x, "/modrt");
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    dir = StrCat(h, "/.cache/modrt");
  } else {
    return "";
  }
  return dir + "/verified-dsos-1";
}

// One line per verified file: "<sha256> <identity> <path>".
std::string Identity(const struct stat& st) {
  return StrCat(st.st_dev, ":", st.st_ino, ":", st.st_size, ":", st.st_mtim.tv_sec, ".",
                st.st_mtim.tv_nsec, ":", st.st_ctim.tv_sec, ".", st.st_ctim.tv_nsec);
}

// The cache file's lines, read once per process.
bool CachedAsVerified(const std::string& line) {
  static std::mutex mu;
  static std::set<std::string>* lines = nullptr;
  std::lock_guard lock(mu);
  if (lines == nullptr) {
    lines = std::make_unique<std::set<std::string>>().release();  // leaked: read at teardown too
    const std::string file = CacheFile();
    std::ifstream in(file.empty() ? "/nonexistent" : file);
    std::string l;
    while (std::getline(in, l)) lines->insert(l);
  }
  return lines->count(line) != 0;
}

// Best effort: a cache that cannot be written only costs a hash next time.
void RememberVerified(const std::string& line, const std::string& path) {
  const std::string file = CacheFile();
  if (file.empty()) return;
  const std::string dir = file.substr(0, file.rfind('/'));
  mkdir(dir.substr(0, dir.rfind('/')).c_str(), 0700);
  mkdir(dir.c_str(), 0700);
  std::vector<std::string> kept;
  {
    std::ifstream in(file);
    std::string l;
    const std::string suffix = " " + path;
    while (std::getline(in, l)) {
      const bool same_path = l.size() >= suffix.size() &&
                             l.compare(l.size() - suffix.size(), suffix.size(), suffix) == 0;
      if (!same_path) kept.push_back(l);
    }
  }
  // The newest 255 files, and this one.
  constexpr size_t kKept = 255;
  if (kept.size() > kKept) kept.erase(kept.begin(), kept.end() - kKept);
  kept.push_back(line);
  const std::string tmp = StrCat(file, ".", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const std::string& l : kept) out << l << '\n';
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace

std::string Sha256(std::string_view data) {
  InitSodiumOnce();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s += kDigits[c >> 4];
    s += kDigits[c & 15];
  }
  return s;
}

namespace {

// Refuses (ImportError) the file at `path` unless its SHA-256 is `expected_hex`,
// the digest `record` (where it was recorded) gives for it.
void VerifyRecordedSha256(const std::string& path, const std::string& expected_hex,
                          const std::string& record) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return;  // LoadPlugin names a missing file
  const std::string line = StrCat(expected_hex, " ", Identity(st), " ", path);
  if (CachedAsVerified(line)) return;
  std::string error;
  const std::string actual = FileSha256Hex(path, &error);
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (actual.empty()) Fail("ImportError", name, " ", error, " (", path, ")");
  if (actual != expected_hex) {
    Fail("ImportError", name, " does not match the SHA-256 recorded for it in ", record,
         " (recorded ", expected_hex, ", file ", actual,
         "): it changed after it was built or installed; reinstall it (", path, ")");
  }
  RememberVerified(line, path);
}

MODRT_STATIC_INIT([] {
  RegisterGlobal("plugin.verify_sha256", [](const Args& a, Ret*) {
    a.ExpectCount(3, "plugin.verify_sha256");
    VerifyRecordedSha256(std::string(a.Str(0)), std::string(a.Str(1)), std::string(a.Str(2)));
  });
});

}  // namespace

}  // namespace modrt
