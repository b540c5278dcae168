/* Linked into every modrt DSO when portable (--config=portable, and always in
 * the wheels), so that DSOs built against the forky root's glibc (2.43) load
 * on glibc 2.28 and later (manylinux_2_28).
 *
 * To cover a new symbol (from new code, or a static library linked into a
 * DSO): `auditwheel show` or //tools/gpu:portable_test names it; add a hidden
 * definition here in terms of what glibc 2.28 exports.
 *
 * Each definition here is hidden: it binds the DSO's own references (its code,
 * and the libstdc++/libgcc it links statically) at link time, instead of
 * importing a glibc symbol version newer than 2.28. Where glibc moved a
 * function (libdl and libpthread into libc in 2.34), the definition forwards
 * to the old symbol version, which every glibc still exports. No glibc header
 * is included: they would redirect the very names defined here. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* The GLIBC_2.2.5 versions: in libdl.so.2 / libpthread.so.0 before 2.34, in
 * libc.so.6 (as compatibility symbols) since. */
#define FORWARD_TO_GLIBC_2_2_5(ret, name, params, args)            \
  ret modrt_compat_##name params;                                  \
  __asm__(".symver modrt_compat_" #name "," #name "@GLIBC_2.2.5"); \
  HIDDEN ret name params { return modrt_compat_##name args; }

FORWARD_TO_GLIBC_2_2_5(void*, dlopen, (const char* file, int mode), (file, mode))
FORWARD_TO_GLIBC_2_2_5(void*, dlsym, (void* handle, const char* name), (handle, name))
FORWARD_TO_GLIBC_2_2_5(char*, dlerror, (void), ())
FORWARD_TO_GLIBC_2_2_5(int, dlclose, (void* handle), (handle))
FORWARD_TO_GLIBC_2_2_5(int, pthread_once, (int* once, void (*init)(void)), (once, init))
FORWARD_TO_GLIBC_2_2_5(int, pthread_rwlock_rdlock, (void* lock), (lock))
FORWARD_TO_GLIBC_2_2_5(int, pthread_rwlock_wrlock, (void* lock), (lock))
FORWARD_TO_GLIBC_2_2_5(int, pthread_rwlock_unlock, (void* lock), (lock))
FORWARD_TO_GLIBC_2_2_5(int, pthread_create,
                       (void* thread, const void* attr, void* (*start)(void*), void* arg),
                       (thread, attr, start, arg))
FORWARD_TO_GLIBC_2_2_5(int, pthread_detach, (unsigned long thread), (thread))

/* std::condition_variable's timed waits on the steady clock call
 * pthread_cond_clockwait (2.30). Before it, libstdc++ waited with the
 * condition's own clock (realtime): the same here, the deadline moved from
 * the given clock to the realtime clock. */
struct modrt_timespec {
  long tv_sec;
  long tv_nsec;
};
int clock_gettime(int clock, struct modrt_timespec* now);
int modrt_compat_pthread_cond_timedwait(void* cond, void* mutex,
                                        const struct modrt_timespec* deadline);
__asm__(".symver modrt_compat_pthread_cond_timedwait,pthread_cond_timedwait@GLIBC_2.3.2");
HIDDEN int pthread_cond_clockwait(void* cond, void* mutex, int clock,
                                  const struct modrt_timespec* deadline) {
  enum { kRealtime = 0, kNanosPerSecond = 1000000000 };
  struct modrt_timespec now_given, now_real, real_deadline;
  clock_gettime(clock, &now_given);
  clock_gettime(kRealtime, &now_real);
  long long left = (long long)(deadline->tv_sec - now_given.tv_sec) * kNanosPerSecond +
                   (deadline->tv_nsec - now_given.tv_nsec);
  long long at = (long long)now_real.tv_sec * kNanosPerSecond + now_real.tv_nsec + left;
  real_deadline.tv_sec = (long)(at / kNanosPerSecond);
  real_deadline.tv_nsec = (long)(at % kNanosPerSecond);
  return modrt_compat_pthread_cond_timedwait(cond, mutex, &real_deadline);
}

/* The stat family became real symbols in 2.33; before, each was an __xstat
 * function with a version argument (1 on x86_64, where stat64 is stat). */
struct stat;
int __xstat(int version, const char* path, struct stat* buf);
int __fxstat(int version, int fd, struct stat* buf);
int __lxstat(int version, const char* path, struct stat* buf);
int __fxstatat(int version, int dirfd, const char* path, struct stat* buf, int flags);
HIDDEN int stat(const char* path, struct stat* buf) { return __xstat(1, path, buf); }
HIDDEN int fstat(int fd, struct stat* buf) { return __fxstat(1, fd, buf); }
HIDDEN int lstat(const char* path, struct stat* buf) { return __lxstat(1, path, buf); }
HIDDEN int fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return __fxstatat(1, dirfd, path, buf, flags);
}
HIDDEN int stat64(const char* path, struct stat* buf) { return __xstat(1, path, buf); }
HIDDEN int fstat64(int fd, struct stat* buf) { return __fxstat(1, fd, buf); }
HIDDEN int lstat64(const char* path, struct stat* buf) { return __lxstat(1, path, buf); }
HIDDEN int fstatat64(int dirfd, const char* path, struct stat* buf, int flags) {
  return __fxstatat(1, dirfd, path, buf, flags);
}

/* The C23 variants (2.38) differ only in also accepting 0b / %b binary. */
long strtol(const char* text, char** end, int base);
unsigned long strtoul(const char* text, char** end, int base);
long long strtoll(const char* text, char** end, int base);
unsigned long long strtoull(const char* text, char** end, int base);
HIDDEN long __isoc23_strtol(const char* text, char** end, int base) {
  return strtol(text, end, base);
}
HIDDEN unsigned long __isoc23_strtoul(const char* text, char** end, int base) {
  return strtoul(text, end, base);
}
HIDDEN long long __isoc23_strtoll(const char* text, char** end, int base) {
  return strtoll(text, end, base);
}
HIDDEN unsigned long long __isoc23_strtoull(const char* text, char** end, int base) {
  return strtoull(text, end, base);
}
int vsscanf(const char* text, const char* format, va_list args);
HIDDEN int __isoc23_sscanf(const char* text, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsscanf(text, format, args);
  va_end(args);
  return n;
}

/* libstdc++ skips atomics when this is set (2.32); never claiming a single
 * thread is always correct. */
HIDDEN char __libc_single_threaded = 0;

/* std::random_device's default source (2.36). */
long getrandom(void* buf, size_t length, unsigned int flags);
HIDDEN uint32_t arc4random(void) {
  uint32_t value = 0;
  size_t got = 0;
  while (got < sizeof(value)) {
    long n = getrandom((char*)&value + got, sizeof(value) - got, 0);
    if (n > 0) got += (size_t)n;
  }
  return value;
}
