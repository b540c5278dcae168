"""libFuzzer targets that are plain replay programs outside --config=fuzz."""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")
load("//backends:defs.bzl", "BACKENDS", "runtime_selected")
load("//tools:build_defs.bzl", "MODRT_COPTS")

# Every module kind with a `module.load_from_bytes.<kind>` loader: the host
# module of the core, then the in-tree backends.
LOADER_KINDS = ["so"] + BACKENDS

def loader_fuzzer(kind):
    """The name of the fuzz target of `module.load_from_bytes.<kind>`."""
    return "load_%s_fuzzer" % kind

def modrt_fuzz_target(name, srcs, local_defines = [], data = [], deps = []):
    """A fuzz target `name`, and `name_lib` with its LLVMFuzzerTestOneInput.

    Under --config=fuzz `name` links libFuzzer; otherwise it replays the files
    and directories named on its command line (the regression tests' mode).

    Args:
      name: target name.
      srcs: the harness sources.
      local_defines: defines of the harness.
      data: runfiles the harness reads.
      deps: what the harness needs beyond the core's API.
    """
    cc_library(
        name = name + "_lib",
        srcs = srcs,
        copts = MODRT_COPTS,
        local_defines = local_defines,
        data = data,
        visibility = ["//:__subpackages__"],
        deps = [
            "//core:runtime_internal",
            "//fuzz:compiler_shared",
            "//fuzz:support",
        ] + deps,
        alwayslink = True,
    )
    cc_binary(
        name = name,
        linkopts = select({
            "//fuzz:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [":" + name + "_lib"] + select({
            "//fuzz:libfuzzer": [],
            "//conditions:default": ["//fuzz:replay_main"],
        }),
    )

def modrt_loader_fuzz_targets():
    """One fuzz target per module kind.

    Each loads that kind's runtime DSO when this build selects it (never for
    a backend that declares none).
    """
    for kind in LOADER_KINDS:
        plugin = ""
        data = [":seeds"]
        if kind in BACKENDS:
            plugin = "backends/%s/libmodrt_runtime_%s.so" % (kind, kind)
            data += select({
                runtime_selected(kind): ["//backends/%s:runtime" % kind],
                "//conditions:default": [],
            })
        modrt_fuzz_target(
            name = loader_fuzzer(kind),
            srcs = ["load_from_bytes_fuzzer.cc"],
            local_defines = [
                "MODRT_FUZZ_KIND=\\\"%s\\\"" % kind,
                "MODRT_FUZZ_PLUGIN=\\\"%s\\\"" % plugin,
                "MODRT_FUZZ_SEEDS=\\\"fuzz/seeds/%s\\\"" % loader_fuzzer(kind),
            ],
            data = data,
        )

def modrt_artifact_fuzz_target(name):
    """The artifact container's fuzz target, with every runtime DSO this build selects.

    Args:
      name: the target name.
    """
    plugins = ["backends/%s/libmodrt_runtime_%s.so" % (b, b) for b in BACKENDS]
    data = [":seeds"]
    for b in BACKENDS:
        data += select({
            runtime_selected(b): ["//backends/%s:runtime" % b],
            "//conditions:default": [],
        })
    modrt_fuzz_target(
        name = name,
        srcs = ["artifact_fuzzer.cc"],
        local_defines = [
            "MODRT_FUZZ_PLUGINS=\\\"%s\\\"" % ":".join(plugins),
            "MODRT_FUZZ_SEEDS=\\\"fuzz/seeds/%s\\\"" % name,
        ],
        data = data,
    )
