"""modrt compile: kernel source + function signatures -> a .modrt artifact.

usage: modrt compile --target=KIND [--function=SIGNATURE|NAME ...]
                     [--output=FILE.modrt] [--force_fallback] [--no-validate]
                     SOURCE [NAME=SOURCE ...]

SOURCE is a file: C for cpu, OpenCL C, CUDA C++, HIP, GLSL (or SPIR-V) for
vulkan, MSL, WGSL, or a prebuilt shared object for hexagon. Multi-shader
targets (vulkan, metal, webgpu) take one file per function as NAME=FILE, or
one file shared by all. A signature reads
"vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)":
buffers end in '*', launch parameters follow ';'. Where the kernel declares
its interface (OpenCL C, CUDA, WGSL, SPIR-V, GLSL: docs/formats/), --function
may be a bare kernel name, or be left out to compile every kernel the source
declares; a full signature is then checked against the kernel's.

Source is checked first, runtime or not: OpenCL C with clang's OpenCL front
end (and a build on an OpenCL device where one is here), WGSL with naga
(wgpu-native, on the first wgpu adapter: lavapipe here), GLSL, CUDA C++ and
HIP by their compilers. A kernel that does not compile is reported with the
file, line and column, and nothing is written. Metal source cannot be checked
off macOS; the command says so. --no-validate skips the checks (source meant
for a newer device compiler than the one here).

The result is real when the target's runtime is loaded here, else a fallback
holding the same bytes, which runs where the runtime is present; the command
says which.
"""

from __future__ import annotations

import os
import warnings

from . import _common
from ._flags import FLAGS, define


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_string, "target", None, "Target kind: cpu, opencl, cuda, rocm, vulkan, metal, webgpu, hexagon.")
    define(
        flags.DEFINE_multi_string,
        "function",
        [],
        "A function signature, or a kernel's bare name where the kernel declares its interface (repeat for several;"
        " omitted: every kernel the source declares).",
    )
    define(flags.DEFINE_string, "output", None, "Where to write the artifact (default: SOURCE with .modrt).")
    define(
        flags.DEFINE_bool,
        "force_fallback",
        False,
        "Produce the fallback module even where the runtime is loaded (MODRT_COMPILE_FORCE_FALLBACK=1).",
    )
    define(
        flags.DEFINE_bool,
        "validate",
        True,
        "Check the source at compile time (--no-validate: skip, for source meant for a newer device compiler).",
    )


def main(argv: list[str]) -> int:
    if not argv:
        return _common.fail("compile needs a SOURCE file", 2)
    if not FLAGS.target:
        return _common.fail("compile needs --target", 2)
    if FLAGS.force_fallback:
        os.environ["MODRT_COMPILE_FORCE_FALLBACK"] = "1"
    modrt = _common.import_modrt()
    try:
        per_function = [a.partition("=") for a in argv]
        if len(argv) == 1 and not per_function[0][1]:
            source = _common.read_source(argv[0])
        elif all(sep for _, sep, _ in per_function):
            source = {name: _common.read_source(path) for name, _, path in per_function}
        else:
            return _common.fail("give one SOURCE file, or NAME=FILE for every function", 2)
        filename = argv[0] if isinstance(source, str | bytes) else {name: path for name, _, path in per_function}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", modrt.SourceNotCheckedWarning)
            module = modrt.compile(
                source, FLAGS.target, FLAGS.function or None, validate=FLAGS.validate, filename=filename
            )
        output = FLAGS.output or os.path.splitext(argv[0].partition("=")[2] or argv[0])[0] + ".modrt"
        module.export(output)
    except (OSError, ValueError, RuntimeError, TypeError) as e:
        return _common.fail(str(e))
    unchecked = [w for w in caught if issubclass(w.category, modrt.SourceNotCheckedWarning)]
    notes = [str(w.message).removeprefix("modrt: ") for w in unchecked]
    for w in caught:
        if not issubclass(w.category, modrt.SourceNotCheckedWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    entry = modrt.artifact.read_manifest(output).modules[0]
    if module.is_fallback:
        status = modrt.backend.runtime_status(FLAGS.target)
        why = "MODRT_COMPILE_FORCE_FALLBACK=1" if FLAGS.force_fallback else (status.reason or "runtime not loaded")
        kind = f"fallback ({why}); it runs where libmodrt_runtime_{FLAGS.target}.so is loaded"
    else:
        kind = "real (runtime loaded here)"
    print(f"wrote {output}: {entry.kind} module, fmt {entry.fmt}, {_common.human_size(entry.size)}, {kind}")
    for f in entry.functions:
        print(f"  {f.signature}")
    if not FLAGS.validate:
        print("source not checked (--no-validate)")
    for note in notes:
        print(f"note: {note}")
    return 0
