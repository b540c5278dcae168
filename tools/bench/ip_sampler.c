// ip_sampler: where one thread's CPU time goes, by shared object and symbol,
// with no profiler installed (the toolchain root has neither perf nor
// valgrind, and this machine's VM exposes no hardware counters). A timer on
// the calling thread's CPU clock (so machine load does not add samples)
// interrupts it every PERIOD microseconds of its own CPU time; the handler
// keeps the interrupted instruction address; stop() names each address with
// dladdr (exported symbols only: a hidden function counts under the nearest
// exported one before it, its object is always right).
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>  // before the system headers, as Python asks
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { kMaxSamples = 1 << 20 };
static void* samples[kMaxSamples];
static volatile sig_atomic_t taken;
static timer_t timer;

static void on_tick(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  if (taken < kMaxSamples) {
    samples[taken] = (void*)((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP];
    taken = taken + 1;
  }
}

// start(period_us): samples the calling thread from now on.
static PyObject* start(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 1) return PyErr_Format(PyExc_TypeError, "start takes 1 argument");
  const long period_us = PyLong_AsLong(args[0]);
  if (PyErr_Occurred()) return NULL;
  struct sigaction action = {0};
  action.sa_sigaction = on_tick;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGPROF, &action, NULL) != 0) return PyErr_SetFromErrno(PyExc_OSError);
  struct sigevent event = {0};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGPROF;
  event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0)
    return PyErr_SetFromErrno(PyExc_OSError);
  taken = 0;
  struct itimerspec every = {{0, period_us * 1000}, {0, period_us * 1000}};
  if (timer_settime(timer, 0, &every, NULL) != 0) return PyErr_SetFromErrno(PyExc_OSError);
  Py_RETURN_NONE;
}

// stop(): {(object, symbol): samples} since start().
static PyObject* stop(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  timer_delete(timer);
  signal(SIGPROF, SIG_IGN);
  PyObject* counts = PyDict_New();
  if (counts == NULL) return NULL;
  for (sig_atomic_t i = 0; i < taken; ++i) {
    Dl_info where = {0};
    const int found = dladdr(samples[i], &where);
    PyObject* key = Py_BuildValue("(ss)", found && where.dli_fname ? where.dli_fname : "?",
                                  found && where.dli_sname ? where.dli_sname : "?");
    if (key == NULL) return NULL;
    PyObject* old = PyDict_GetItem(counts, key);
    PyObject* value = PyLong_FromLong(old ? PyLong_AsLong(old) + 1 : 1);
    if (value == NULL || PyDict_SetItem(counts, key, value) != 0) return NULL;
    Py_DECREF(key);
    Py_DECREF(value);
  }
  return counts;
}

static PyMethodDef methods[] = {
    {"start", (PyCFunction)(void (*)(void))start, METH_FASTCALL, "start(period_us)."},
    {"stop", (PyCFunction)(void (*)(void))stop, METH_FASTCALL, "{(object, symbol): samples}."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ip_sampler", NULL, -1, methods};

PyMODINIT_FUNC PyInit_ip_sampler(void) { return PyModule_Create(&module); }
