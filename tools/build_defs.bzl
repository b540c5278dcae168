"""Shared build settings and the pytest test macros."""

load("@rules_python//python:defs.bzl", "py_test")

# Loadable only inside modrt: its labels name modrt's own packages.
visibility("//...")

# Every native target: only symbols marked MODRT_API leave a DSO.
MODRT_COPTS = [
    "-fvisibility=hidden",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
]

# target_compatible_with of an integration test: skipped unless
# --config=integration.
_INTEGRATION_ONLY = select({
    "//tools:integration_on": [],
    "//conditions:default": ["@platforms//:incompatible"],
})

def modrt_py_test(name, srcs, deps = [], data = [], integration = False, **kwargs):
    """A py_test that runs its sources under pytest with modrt importable.

    Results go to Bazel's XML_OUTPUT_FILE, so each pytest case is counted.

    Args:
      name: test name.
      srcs: pytest files.
      deps: extra py_library deps.
      data: extra runfiles.
      integration: an integration test (tinygrad or a model on modrt, a
        cluster, a nested Bazel build): run only with --config=integration,
        tagged "integration".
      **kwargs: passed to py_test (tags, size, env, target_compatible_with, ...).
    """
    kwargs.setdefault("size", "small")
    if integration:
        kwargs["target_compatible_with"] = kwargs.get("target_compatible_with", []) + _INTEGRATION_ONLY
        kwargs["tags"] = kwargs.get("tags", []) + ["integration"]
    py_test(
        name = name,
        srcs = srcs + ["//tools:pytest_main.py"],
        main = "//tools:pytest_main.py",
        args = ["$(rootpath %s)" % s for s in srcs],
        deps = ["//python:modrt"] + deps,
        data = data,
        **kwargs
    )

def modrt_py_tests(tests):
    """One modrt_py_test per entry of `tests`, all declared the same way.

    Args:
      tests: {test name: attributes}. "srcs" defaults to [name + ".py"]; every
        other attribute goes to modrt_py_test as given.
    """
    for name, given in tests.items():
        attrs = dict(given)
        srcs = attrs.pop("srcs", [name + ".py"])
        modrt_py_test(name = name, srcs = srcs, **attrs)
