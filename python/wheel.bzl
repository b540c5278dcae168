"""modrt's wheels: `modrt` (//python:wheel) and one per runtime backend
(//backends/<x>:wheel, from modrt_backend_wheel("<x>") in that package).

Every wheel is built optimized (-c opt) and portable
(//tools/gpu:build_portable), through a transition, whatever the command line
says: its DSOs load on glibc 2.28 and later, so it is tagged manylinux_2_28; //tests:wheel_audit_test has auditwheel
confirm it. The `modrt` wheel's CPython extension is built for the limited
API of 3.10 (abi3), so one wheel serves CPython 3.10 and later.

Versions: modrt's version starts with the plugin ABI major of
core/include/modrt/abi/plugin_api.h (the build checks it), and every backend wheel
requires `modrt >= M, < M+1` for the major M it was built with, read from the
same header when the wheel is written.

rules_python's py_wheel needs its wheelmaker tool (@rules_python//tools),
which Debian's offline rules_python does not ship; python/build_wheel.py
writes the wheels.
"""

load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("//backends:defs.bzl", "BACKENDS")

# modrt's release. Its major is the plugin ABI major (checked at build time).
MODRT_VERSION = "1.0.0"

# The backend wheels, for the tests that install and audit them all: every
# backend's :wheel (modrt_backend_wheel in its BUILD.bazel; an empty
# filegroup where the backend has no wheel for this platform).
BACKEND_WHEELS = ["//backends/%s:wheel" % b for b in BACKENDS]

_PORTABLE = "//tools/gpu:build_portable"
_RUNTIMES = "//backends:runtimes"
_BACKEND_FLAGS = ["//backends:%s" % b for b in BACKENDS]

def _wheel_transition_impl(settings, attr):
    # Optimized, like any release wheel (a fastbuild core makes each call
    # from Python about twice as slow).
    out = {_PORTABLE: True, "//command_line_option:compilation_mode": "opt"}

    # The modrt wheel bundles what the command line selected.
    for flag in _BACKEND_FLAGS:
        out[flag] = settings[flag]

    # A backend wheel carries its runtime whatever the flags. Where the
    # command line selects it (its flag on, or --config=all-runtimes), the
    # wheel keeps the modrt wheel's configuration, so the runtime DSO is
    # compiled once for both wheels. Otherwise every flag is turned on: the
    # backend wheels not selected share one configuration.
    if attr.backend:
        own = "//backends:" + attr.backend
        if not (settings[own] == "on" or (settings[own] == "auto" and settings[_RUNTIMES] == "all")):
            for flag in _BACKEND_FLAGS:
                out[flag] = "on"
    return out

_wheel_transition = transition(
    implementation = _wheel_transition_impl,
    inputs = [_RUNTIMES] + _BACKEND_FLAGS,
    outputs = [_PORTABLE, "//command_line_option:compilation_mode"] + _BACKEND_FLAGS,
)

def _wheel_path(f, strip_prefixes):
    path = f.short_path
    if path.startswith("../"):
        path = path.split("/", 2)[2]
    for prefix in strip_prefixes:
        if path.startswith(prefix):
            return path[len(prefix):]
    return path

def _plugin_api_header(target):
    for f in target[CcInfo].compilation_context.headers.to_list():
        if f.basename == "plugin_api.h":
            return f
    fail("%s has no plugin_api.h" % target.label)

def _platform_tag(ctx):
    return "manylinux_2_28_" + ctx.attr.arch

def _so_files(targets):
    return [f for t in targets for f in t[DefaultInfo].files.to_list() if f.basename.endswith(".so")]

def _modrt_wheel_impl(ctx):
    tag = "%s-%s-%s" % (ctx.attr.python_tag, ctx.attr.abi, _platform_tag(ctx))
    dist = ctx.attr.distribution.replace("-", "_")
    out = ctx.actions.declare_file("%s-%s-%s.whl" % (dist, ctx.attr.version, tag))
    header = _plugin_api_header(ctx.attr._plugin_api)
    args = ctx.actions.args()
    args.add("--out", out)
    args.add("--name", ctx.attr.distribution)
    args.add("--version", ctx.attr.version)
    args.add("--tag", tag)
    args.add("--summary", ctx.attr.summary)
    args.add("--python_requires", ctx.attr.python_requires)
    args.add("--plugin_api_header", header)
    args.add_all(ctx.attr.requires, before_each = "--requires")
    args.add_all(["%s=%s" % (extra, r) for extra, reqs in ctx.attr.extras.items() for r in reqs], before_each = "--extra")
    args.add_all(["%s=%s" % kv for kv in ctx.attr.console_scripts.items()], before_each = "--console_script")
    inputs = [header]
    for dep in ctx.attr.deps:
        for f in dep[PyInfo].transitive_sources.to_list():
            args.add("--file", "%s=%s" % (_wheel_path(f, ctx.attr.strip_path_prefixes), f.path))
            inputs.append(f)
    for f in _so_files(ctx.attr.extensions):
        # Python extension modules sit in their package, where import finds them.
        args.add("--file", "%s=%s" % (_wheel_path(f, ctx.attr.strip_path_prefixes), f.path))
        inputs.append(f)
    for f in _so_files(ctx.attr.libs):
        # modrt._locate looks in the package's own lib/ directory.
        args.add("--file", "modrt/lib/%s=%s" % (f.basename, f.path))
        inputs.append(f)
    if ctx.attr.backend:
        runtimes = _so_files(ctx.attr.runtime)
        if len(runtimes) != 1:
            fail("%s should produce exactly one .so" % ctx.attr.runtime[0].label)
        args.add("--backend", ctx.attr.backend)
        args.add("--runtime", runtimes[0])
        inputs += runtimes
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = inputs,
        outputs = [out],
        mnemonic = "ModrtWheel",
        progress_message = "Building wheel %s" % out.basename,
    )
    return [DefaultInfo(files = depset([out]))]

_modrt_wheel = rule(
    implementation = _modrt_wheel_impl,
    doc = "A wheel of the .py files of `deps`, the `extensions` at their package path, the `libs` DSOs at " +
          "modrt/lib/<name>, and for a backend wheel its `runtime` DSO in the package modrt_<backend>.",
    cfg = _wheel_transition,
    attrs = {
        "abi": attr.string(default = "none"),
        "arch": attr.string(mandatory = True),
        "backend": attr.string(doc = "For a backend wheel: the backend whose runtime it carries."),
        "console_scripts": attr.string_dict(),
        "deps": attr.label_list(providers = [PyInfo]),
        "distribution": attr.string(mandatory = True),
        "extras": attr.string_list_dict(doc = "Optional dependencies: {extra: [requirement, ...]} (pip install dist[extra])."),
        "extensions": attr.label_list(doc = "Python extension modules, placed at their package path."),
        "libs": attr.label_list(),
        "python_requires": attr.string(default = ">=3.10"),
        "python_tag": attr.string(default = "py3"),
        "requires": attr.string_list(),
        "runtime": attr.label_list(doc = "A backend wheel's runtime DSO (one)."),
        "strip_path_prefixes": attr.string_list(),
        "summary": attr.string(),
        "version": attr.string(mandatory = True),
        "_builder": attr.label(default = "//python:build_wheel", executable = True, cfg = "exec"),
        "_plugin_api": attr.label(default = "//core:plugin_api", providers = [CcInfo]),
    },
)

_ARCH = select({
    "@platforms//cpu:aarch64": "aarch64",
    "//conditions:default": "x86_64",
})

def modrt_wheel(name, **kwargs):
    """The `modrt` wheel (see python/BUILD.bazel)."""
    _modrt_wheel(name = name, arch = _ARCH, version = MODRT_VERSION, **kwargs)

def modrt_backend_wheel(backend, name = "wheel", requires = [], extras = {}):
    """`modrt-<backend>`: the backend's runtime DSO, for `pip install`.

    Call it in backends/<backend>/BUILD.bazel. The wheel holds the package
    modrt_<backend>/ (the DSO and runtime.txt, which modrt reads to find it
    without importing anything) and requires a modrt of the plugin ABI major
    it was built with. It builds whatever the flags (the wheel turns its
    runtime on); `bazel build //...` builds it only where the runtime builds.

    Args:
      backend: the backend, as in //backends:<backend>.
      name: the target name.
      requires: more Requires-Dist lines (what the runtime loads at run time,
        e.g. the wgpu package whose libwgpu_native the WebGPU runtime dlopens).
      extras: optional dependencies, {extra: [requirement, ...]}
        (`pip install modrt-<backend>[extra]`).
    """
    _modrt_wheel(
        name = name,
        arch = _ARCH,
        backend = backend,
        distribution = "modrt-" + backend,
        extras = extras,
        requires = requires,
        runtime = [":runtime"],
        summary = "modrt's %s runtime (libmodrt_runtime_%s.so): `import modrt` finds and loads it" % (backend, backend),
        version = MODRT_VERSION,
        visibility = ["//visibility:public"],
    )

def _modrt_version_py_impl(ctx):
    header = _plugin_api_header(ctx.attr._plugin_api)
    args = ctx.actions.args()
    args.add("--version", MODRT_VERSION)
    args.add("--plugin_api_header", header)
    args.add("--write_version_py", ctx.outputs.out)
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = [header],
        outputs = [ctx.outputs.out],
        mnemonic = "ModrtVersion",
    )
    return [DefaultInfo(files = depset([ctx.outputs.out]))]

modrt_version_py = rule(
    implementation = _modrt_version_py_impl,
    doc = "modrt/_version.py: modrt's version and the plugin ABI version of plugin_api.h.",
    attrs = {
        "out": attr.output(mandatory = True),
        "_builder": attr.label(default = "//python:build_wheel", executable = True, cfg = "exec"),
        "_plugin_api": attr.label(default = "//core:plugin_api", providers = [CcInfo]),
    },
)

def _wheel_dir_impl(ctx):
    outs = []
    for f in ctx.files.wheels:
        if not f.basename.endswith(".whl"):
            fail("%s is not a wheel (wheel_dir takes .whl files)" % f.short_path)
        out = ctx.actions.declare_file("%s/%s" % (ctx.attr.name, f.basename))
        ctx.actions.symlink(output = out, target_file = f)
        outs.append(out)
    return [DefaultInfo(files = depset(outs))]

wheel_dir = rule(
    implementation = _wheel_dir_impl,
    doc = "bazel-bin/<package>/<name>/: the given wheels in one directory (each wheel is built in a " +
          "configuration of its own, so their own paths are not under bazel-bin).",
    # Any files, checked to be wheels: a backend without a wheel for this
    # platform gives an empty :wheel (Metal's), which allow_files would refuse.
    attrs = {"wheels": attr.label_list(allow_files = True)},
)
