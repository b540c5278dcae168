"""Extra deps of every modrt DSO under --config=portable."""

# Linked into libmodrt_runtime.so, libmodrt_compiler.so and each runtime DSO.
PORTABLE_DEPS = select({
    "//tools/gpu:portable": ["//tools/gpu:glibc_compat"],
    "//conditions:default": [],
})
