"""The one macro that gives every backend package the same targets."""

load("@bazel_skylib//lib:selects.bzl", "selects")
load("@bazel_skylib//rules:write_file.bzl", "write_file")
load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")
load("@rules_python//python:defs.bzl", "py_library")
load("//tools:build_defs.bzl", "MODRT_COPTS", "modrt_py_tests")
load("//tools/gpu:portable.bzl", "PORTABLE_DEPS")

# Loadable only inside modrt: its labels name modrt's own packages.
visibility("//...")

# In-tree backends: the packages under backends/, in the order modrt lists
# them. Only names: each declares its identity (display name, device type,
# payload shape, formats, platform constraints) in its own BUILD.bazel with
# modrt_backend().
BACKENDS = ["cuda", "rocm", "metal", "vulkan", "opencl", "hexagon", "webgpu"]

ALL_FALLBACKS = ["//backends/%s:fallback" % b for b in BACKENDS]

# The runtime DSOs export modrt_plugin_init and nothing else.
_PLUGIN_EXPORTS = Label("//backends:plugin_exports.lds")

def runtime_selected(backend):
    """The config_setting that is true when `backend`'s runtime is selected.

    That is: its flag is on and, for platform-bound runtimes, the platform
    matches.

    Args:
      backend: the backend, as in //backends:<backend>.

    Returns:
      The config_setting's label.
    """
    return "//backends:%s_selected" % backend

def flags_on():
    """The backends whose --//backends:<x> flag is on, whatever the platform.

    Returns:
      A list of backend names, made of selects.
    """
    result = []
    for b in BACKENDS:
        result += select({
            "//backends:%s_on" % b: [b],
            "//conditions:default": [],
        })
    return result

def selected_runtimes():
    """The `:runtime` targets of the backends selected by their flags.

    A backend whose modrt_backend() declares no runtime is never selected.

    Returns:
      A list of labels, made of selects.
    """
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

# DLPack device types (dlpack.h's DLDeviceType), by enumerator name.
DLPACK_DEVICE_TYPES = {
    "kDLCPU": 1,
    "kDLCUDA": 2,
    "kDLCUDAHost": 3,
    "kDLOpenCL": 4,
    "kDLVulkan": 7,
    "kDLMetal": 8,
    "kDLVPI": 9,
    "kDLROCM": 10,
    "kDLROCMHost": 11,
    "kDLExtDev": 12,
    "kDLCUDAManaged": 13,
    "kDLOneAPI": 14,
    "kDLWebGPU": 15,
    "kDLHexagon": 16,
}

PAYLOAD_SHAPES = {
    "single-binary": "kModrtSingleBinary",
    "multi-shader": "kModrtMultiShader",
}

BackendIdentityInfo = provider(
    doc = "A backend's identity, as its modrt_backend() declares it.",
    fields = {
        "name": "backend name: device kind, module kind, flag and hook name",
        "display_name": "name for messages",
        "device_type": "DLPack device type (int)",
        "payload_shape": "single-binary or multi-shader",
        "formats": "accepted payload formats (list)",
        "has_runtime": "whether the package declares a runtime DSO (runtime_srcs)",
        "addressable_buffers": "buffers are device addresses a kernel may take at a byte offset",
    },
)

def _backend_identity_impl(ctx):
    return [BackendIdentityInfo(
        name = ctx.attr.backend,
        display_name = ctx.attr.display_name,
        device_type = DLPACK_DEVICE_TYPES[ctx.attr.device_type],
        payload_shape = ctx.attr.payload_shape,
        formats = ctx.attr.formats,
        has_runtime = ctx.attr.has_runtime,
        addressable_buffers = ctx.attr.addressable_buffers,
    )]

_backend_identity = rule(
    implementation = _backend_identity_impl,
    attrs = {
        "addressable_buffers": attr.bool(mandatory = True),
        "backend": attr.string(mandatory = True),
        "device_type": attr.string(mandatory = True, values = DLPACK_DEVICE_TYPES.keys()),
        "display_name": attr.string(mandatory = True),
        "formats": attr.string_list(mandatory = True),
        "has_runtime": attr.bool(mandatory = True),
        "payload_shape": attr.string(mandatory = True, values = PAYLOAD_SHAPES.keys()),
    },
)

def _c_string(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')

def modrt_backend(
        name,
        display_name,
        device_type,
        payload_shape,
        formats,
        hook_srcs,
        runtime_srcs = None,
        runtime_deps = [],
        fallback_deps = [],
        runtime_compatible_with = [],
        cpu_runtime = False,
        addressable_buffers = False):
    """Declares backend `name`'s identity and defines its standard targets.

    The targets: :runtime (when it has sources), :fallback, :hook,
    :identity and :testing (the Python modules in testing/: the backend's
    kernels for the shared test suites).

    The identity is written here once; the core registry (through the
    fallback and the runtime DSO), the Python selection data and the fallback
    registration all derive from it.

    Args:
      name: the backend, as in //backends:<name>, modrt.backend.<name>, the
        device kind and the module kind.
      display_name: the name in messages ("OpenCL").
      device_type: its DLPack device type, as dlpack.h names it ("kDLOpenCL").
      payload_shape: "single-binary" or "multi-shader".
      formats: the payload formats its modules accept.
      hook_srcs: the Python package modrt.backend.<name>, under python/modrt/backend/<name>/.
      runtime_srcs: sources of libmodrt_runtime_<name>.so; None while it has no runtime.
      runtime_deps: extra deps of the runtime DSO (never the vendor driver: it is dlopen'ed).
      fallback_deps: extra deps of :fallback, so linked into libmodrt_compiler.so
        (codegen-side native code, such as CUDA's NVRTC driver).
      runtime_compatible_with: platform constraints of the runtime DSO.
      cpu_runtime: the runtime runs on a plain CPU machine (PoCL, lavapipe):
        --config=cpu-runtimes (--//backends:runtimes=cpu) turns it on.
      addressable_buffers: a buffer's data is a device address a kernel may
        take at a byte offset (CUDA, ROCm); False for handles (cl_mem,
        VkBuffer), where the core refuses a tensor with a byte offset.
    """
    _backend_identity(
        name = "identity_info",
        backend = name,
        display_name = display_name,
        device_type = device_type,
        payload_shape = payload_shape,
        formats = formats,
        has_runtime = runtime_srcs != None,
        addressable_buffers = addressable_buffers,
        visibility = ["//python:__pkg__"],
    )
    identity_fields = ", ".join([
        _c_string(name),
        _c_string(display_name),
        device_type,
        PAYLOAD_SHAPES[payload_shape],
        _c_string(",".join(formats)),
        "1" if addressable_buffers else "0",
    ])

    # The runtime DSO's copy: backend_identity.h, kBackendIdentity.
    write_file(
        name = "identity_header",
        out = "backend_identity.h",
        content = [
            "// Generated by modrt_backend() from this package's BUILD.bazel: the backend's identity.",
            "#ifndef MODRT_BACKEND_IDENTITY_H_",
            "#define MODRT_BACKEND_IDENTITY_H_",
            "#include \"modrt/abi/plugin_api.h\"",
            "static const ModrtBackendIdentity kBackendIdentity = {sizeof(ModrtBackendIdentity), %s};" % identity_fields,
            "#endif",
            "",
        ],
    )
    cc_library(
        name = "identity",
        hdrs = [":backend_identity.h"],
        includes = ["."],
        deps = ["//core:plugin_api"],
    )

    # The fallback is the shared FallbackModule, for this identity: one
    # generated registration each, in libmodrt_compiler.so.
    write_file(
        name = "fallback_src",
        out = "fallback_generated.cc",
        content = [
            "// Generated by modrt_backend() from this package's BUILD.bazel.",
            "#include \"backend_identity.h\"",
            "#include \"modrt/codegen/codegen.h\"",
            "namespace {",
            "MODRT_CODEGEN_INIT([] { modrt::RegisterCodegenWithFallback(kBackendIdentity); });",
            "}  // namespace",
            "",
        ],
    )
    cc_library(
        name = "fallback",
        srcs = [":fallback_generated.cc"],
        copts = MODRT_COPTS,
        visibility = ["//visibility:public"],
        deps = [
            ":identity",
            "//core:compiler_objects",
        ] + fallback_deps,
        alwayslink = True,
    )

    # The backend's kernels for the suites every backend shares
    # (backends/<x>/testing/<x>_kernels.py, found by tests/backend_kernels.py
    # through //tests:support, which depends on every backend's :testing).
    py_library(
        name = "testing",
        srcs = native.glob(["testing/*.py"]),
        imports = ["testing"],
        # modrt's own tests only: not a target a downstream module uses.
        visibility = ["//:__subpackages__"],
    )
    py_library(
        name = "hook",
        srcs = hook_srcs,
        imports = ["python"],
        visibility = ["//visibility:public"],
        # A hook imports modrt.sdk only (and its own modules).
        deps = ["//python:sdk"],
    )

    # //backends:<name>_on: its flag is on, or auto and its group is turned on.
    selects.config_setting_group(
        name = "runtime_on",
        match_any = ["//backends:%s_flag_on" % name, "//backends:%s_by_all" % name] +
                    (["//backends:%s_by_cpu" % name] if cpu_runtime else []),
        visibility = ["//:__subpackages__"],
    )
    if runtime_srcs == None:
        # No runtime DSO: never selected, whatever the flag says, so
        # selected_runtimes() and the fuzz targets never pick :runtime.
        native.alias(
            name = "runtime_selected",
            actual = "//backends:never",
            visibility = ["//backends:__pkg__"],
        )
        native.filegroup(
            name = "runtime",
            srcs = [],
            target_compatible_with = ["@platforms//:incompatible"],
            visibility = ["//visibility:public"],
        )
        return

    # //backends:<name>_selected: the flag is on and the platform matches
    # the runtime's constraints.
    if runtime_compatible_with:
        selects.config_setting_group(
            name = "runtime_selected",
            match_all = ["//backends:%s_on" % name] + runtime_compatible_with,
            visibility = ["//backends:__pkg__"],
        )
    else:
        native.alias(
            name = "runtime_selected",
            actual = "//backends:%s_on" % name,
            visibility = ["//backends:__pkg__"],
        )
    dso = "libmodrt_runtime_%s.so" % name
    cc_binary(
        name = dso,
        srcs = runtime_srcs,
        additional_linker_inputs = [_PLUGIN_EXPORTS],
        copts = MODRT_COPTS,
        linkopts = ["-Wl,--version-script=$(location %s)" % _PLUGIN_EXPORTS],
        linkshared = True,
        # Built only when selected: `bazel build //...` with the flag off
        # neither builds nor ships it.
        target_compatible_with = only_when_selected(name) + runtime_compatible_with,
        # Headers only: a plugin reaches the core through its table, and
        # links no part of it.
        deps = [":identity"] + runtime_deps + PORTABLE_DEPS,
    )
    native.alias(
        name = "runtime",
        actual = ":" + dso,
        visibility = ["//visibility:public"],
    )

def modrt_backend_tests(backend, tests):
    """Declares a backend package's pytest targets, all the same way.

    Each runs its sources under pytest (modrt_py_tests) with //tests:support
    importable, and is "small" unless its attributes say otherwise. A test
    needs the backend's runtime unless it says "needs_runtime": False; one that
    needs it is incompatible (so `bazel test //...` skips it) where the runtime
    is not selected: its flag is off, or the platform does not match the
    runtime's constraints. A test named runtime_contract_test runs the contract
    every runtime DSO keeps (//backends:runtime_contract_test.py) for this
    backend.

    Args:
      backend: the backend, as in //backends:<backend>.
      tests: {test name: attributes}. "srcs" defaults to [name + ".py"];
        "needs_runtime" to True; "deps" are added to //tests:support; every
        other attribute ("size", "data", "env", "tags", "exec_properties")
        goes to the py_test as given.
    """
    declared = {}
    for name, given in tests.items():
        attrs = dict(given)
        needs_runtime = attrs.pop("needs_runtime", True)
        if name == "runtime_contract_test":
            attrs["srcs"] = ["//backends:runtime_contract_test.py"]
            attrs["env"] = dict(attrs.get("env", {}), MODRT_CONTRACT_BACKEND = backend)
        attrs["deps"] = ["//tests:support"] + attrs.get("deps", [])
        attrs["target_compatible_with"] = only_when_selected(backend) if needs_runtime else []
        declared[name] = attrs
    modrt_py_tests(declared)
