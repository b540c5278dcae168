"""The one macro that gives every backend package the same targets."""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")
load("@rules_python//python:defs.bzl", "py_library")
load("//tools:build_defs.bzl", "MODRT_COPTS", "modrt_py_test")

# In-tree backends with a package under backends/.
BACKENDS = ["opencl"]

ALL_FALLBACKS = ["//backends/%s:fallback" % b for b in BACKENDS]

def runtime_selected(backend):
    """The config_setting that is true when `backend`'s runtime is selected."""
    return "//backends:%s_on" % backend

def selected_runtimes():
    """The `:runtime` targets of the backends selected by their flags."""
    result = []
    for b in BACKENDS:
        result += select({
            runtime_selected(b): ["//backends/%s:runtime" % b],
            "//conditions:default": [],
        })
    return result

def only_when_selected(backend):
    """target_compatible_with for targets that need `backend`'s runtime."""
    return select({
        runtime_selected(backend): [],
        "//conditions:default": ["@platforms//:incompatible"],
    })

def modrt_backend(
        name,
        runtime_srcs,
        fallback_srcs,
        hook_srcs,
        runtime_deps = [],
        runtime_compatible_with = []):
    """Defines :runtime, :fallback and :hook for backend `name`.

    Args:
      name: the backend, as in //backends:<name> and modrt.backend.<name>.
      runtime_srcs: sources of libmodrt_runtime_<name>.so.
      fallback_srcs: sources of the codegen-side fallback, linked into libmodrt_compiler.so.
      hook_srcs: the Python package modrt.backend.<name>, under python/modrt/backend/<name>/.
      runtime_deps: extra deps of the runtime DSO (never the vendor driver: it is dlopen'ed).
      runtime_compatible_with: platform constraints of the runtime DSO.
    """
    dso = "libmodrt_runtime_%s.so" % name
    cc_binary(
        name = dso,
        srcs = runtime_srcs,
        copts = MODRT_COPTS,
        linkshared = True,
        target_compatible_with = runtime_compatible_with,
        deps = ["//core:runtime_api"] + runtime_deps,
    )
    native.alias(
        name = "runtime",
        actual = ":" + dso,
        visibility = ["//visibility:public"],
    )
    cc_library(
        name = "fallback",
        srcs = fallback_srcs,
        copts = MODRT_COPTS,
        visibility = ["//visibility:public"],
        deps = ["//core:runtime_api"],
        alwayslink = True,
    )
    py_library(
        name = "hook",
        srcs = hook_srcs,
        imports = ["python"],
        visibility = ["//visibility:public"],
    )

def modrt_backend_test(name, backend, srcs, needs_runtime, deps = [], **kwargs):
    """A pytest target of a backend package.

    Args:
      name: test name.
      backend: the backend.
      srcs: pytest files.
      needs_runtime: if True, the test is incompatible (skipped) unless the
        backend's runtime is selected.
      deps: extra py_library deps.
      **kwargs: passed to modrt_py_test.
    """
    modrt_py_test(
        name = name,
        srcs = srcs,
        deps = deps,
        target_compatible_with = only_when_selected(backend) if needs_runtime else [],
        **kwargs
    )
