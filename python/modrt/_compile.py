"""`modrt.compile`: dispatch to the codegen driver of the target's backend."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ._compile_errors import LANGUAGE, SignatureError
from ._ffi import call
from .runtime import Module, Payload
from .target import Target

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._codegen import Arg

# A codegen driver turns source and signatures into a payload.
CodegenDriver = Callable[[str | bytes, Sequence[str], Target], Payload]
_DRIVERS: dict[str, CodegenDriver] = {}
# A reflector reads a kernel source's own interface: one canonical signature
# per kernel (argument names, const buffers, element and scalar types, launch
# tags), in the order the source defines them. It runs on the codegen side,
# with or without the backend's runtime. None: this source does not declare
# its interface (e.g. PTX, which records no element types), so signatures are
# required and the codegen driver checks what the source does say.
Reflector = Callable[[str | bytes], list[str] | None]
_REFLECTORS: dict[str, Reflector] = {}


def register_codegen(kind: str, driver: CodegenDriver) -> None:
    """Registers the codegen driver of target kind `kind` (called by hooks)."""
    _DRIVERS[kind] = driver


def register_reflector(kind: str, reflect: Reflector) -> None:
    """Registers how target kind `kind` reads signatures from a kernel source."""
    _REFLECTORS[kind] = reflect


def _mismatch(given: Arg, kernel: Arg, fits: Callable[[str], bool] | None = None) -> str:
    """What differs between one given argument and the kernel's, or "".
    `fits(dtype)`: whether the format binds a buffer of that dtype here
    besides the kernel's own element type (packed data)."""
    if given.is_buffer != kernel.is_buffer:
        kinds = ["buffer" if a.is_buffer else "scalar" for a in (given, kernel)]
        return f"is a {kinds[0]} in the signature, a {kinds[1]} in the kernel"
    if given.dtype != kernel.dtype and not (given.is_buffer and fits is not None and fits(given.dtype)):
        what = "buffer element type" if given.is_buffer else "scalar type"
        return f"has {what} {given.dtype} in the signature, {kernel.dtype} in the kernel"
    if given.name and kernel.name and given.name != kernel.name:
        return f"is named '{given.name}' in the signature, '{kernel.name}' in the kernel"
    if given.read_only and kernel.is_buffer and not kernel.read_only:
        return "is const in the signature, but the kernel may write it"
    return ""


def check_signature(kind: str, given: str, kernel: str, buffer_fits: Callable[[str, int], bool] | None = None) -> str:
    """`given` checked against the kernel's signature `kernel` (SignatureError
    showing both when they differ in argument count, buffer element types,
    scalar types, or names where both have them); returns the signature the
    module keeps: the given one, with the kernel's names and const markers
    where it has none. `buffer_fits(dtype, index)`: the reflector's rule for
    buffer element types other than the kernel's own (see register)."""
    from ._codegen import parse_signature

    name, given_args, tags = parse_signature(given)
    _, kernel_args, _ = parse_signature(kernel)
    if len(given_args) != len(kernel_args):
        raise SignatureError(
            kind, given, kernel, f"{len(given_args)} arguments in the signature, {len(kernel_args)} in the kernel"
        )
    for i, (g, k) in enumerate(zip(given_args, kernel_args)):
        fits = (lambda dtype, i=i: buffer_fits(dtype, i)) if buffer_fits is not None else None
        why = _mismatch(g, k, fits)
        if why:
            raise SignatureError(kind, given, kernel, f"argument {i} ('{g.name or k.name}') {why}")
        g.name = g.name or k.name
        g.read_only = g.read_only or k.read_only
    if "dyn_shared_mem" in parse_signature(kernel)[2] and "dyn_shared_mem" not in tags:
        raise SignatureError(
            kind, given, kernel, "the kernel takes dynamic shared memory; the signature has no dyn_shared_mem"
        )
    return f"{name}({', '.join(str(a) for a in given_args)}{'; ' if tags else ''}{', '.join(tags)})"


def _given(kind: str, functions: Sequence[str] | None, why: str) -> list[str]:
    """`functions` for a source whose interface is not read: full signatures, required."""
    if not functions:
        raise ValueError(f"compile for target '{kind}' needs function signatures: {why}")
    if any("(" not in f for f in functions):
        raise ValueError(f"target '{kind}' needs full signatures here ({why}): give full signatures, not names")
    return list(functions)


def resolve_functions(kind: str, source: str | bytes, functions: Sequence[str] | None) -> list[str]:
    """The signatures a module of `kind` is built with: `functions` checked
    against what the target's reflector reads from `source`; with `functions`
    omitted, every kernel the source defines; a bare name picks that kernel."""
    reflect = _REFLECTORS.get(kind)
    if reflect is None:
        return _given(kind, functions, "it does not read them from the kernel")
    from ._codegen import normalize_signature, parse_signature

    wanted = [parse_signature(f)[0] if "(" in f else f.strip() for f in functions or ()]
    reflected = _reflected_kernels(reflect, source, wanted[0] if len(wanted) == 1 else None)
    if reflected is None:
        return _given(
            kind, functions, "this source does not declare its interface (e.g. PTX, which records no element types)"
        )
    fits = getattr(reflect, "buffer_fits", None)
    if functions is None:
        if isinstance(source, Mapping) and set(reflected) != set(source):
            unknown = [k for k in source if k not in reflected]
            raise ValueError(
                f"the {LANGUAGE.get(kind, kind)} sources of {', '.join(unknown)} define no kernel of that name "
                "and not exactly one kernel"
            )
        if not reflected:
            raise ValueError(f"the {LANGUAGE.get(kind, kind)} source defines no kernel")
        return [sig for sig, _ in reflected.values()]
    if not functions:
        raise ValueError("compile needs at least one function (or functions=None for every kernel)")
    resolved = []
    for f in functions:
        name = parse_signature(f)[0] if "(" in f else f.strip()
        found = reflected.get(name)
        if found is None and isinstance(source, Mapping) and "(" in f:
            # Its source is missing or has no kernel of its own: the driver and
            # the source check say so (naming the sources), not reflection.
            resolved.append(f)
            continue
        if found is None:
            raise ValueError(
                f"the {LANGUAGE.get(kind, kind)} source has no kernel '{name}' "
                f"(it defines: {', '.join(reflected) or 'none'})"
            )
        kernel, text = found
        if "(" not in f:
            resolved.append(kernel)
            continue
        buffer_fits = (lambda dtype, i, text=text: fits(dtype, text, i)) if fits is not None else None
        resolved.append(check_signature(kind, normalize_signature(f), kernel, buffer_fits))
    return resolved


def _reflect(reflect: Reflector, text: str | bytes, name: str | None) -> list[str] | None:
    """What `reflect` reads from `text`. A reflector whose kernels have no
    name of their own (GLSL's entry point is always main) says so with a
    true `names_kernel` attribute and takes the function's name too."""
    if name and getattr(reflect, "names_kernel", False):
        return reflect(text, name)
    return reflect(text)


def _reflected_kernels(
    reflect: Reflector, source: str | bytes | Mapping[str, str | bytes], only: str | None = None
) -> dict[str, tuple[str, str | bytes]] | None:
    """{kernel name: (its reflected signature, its source)}. With one source
    per function, each source's kernel of that name, else its only kernel,
    under the function's name; `only`: the one function asked for from a
    single source. None when a source does not declare its interface (the
    reflector answered None)."""
    from ._codegen import parse_signature

    if not isinstance(source, Mapping):
        signatures = _reflect(reflect, source, only)
        if signatures is None:
            return None
        return {parse_signature(sig)[0]: (sig, source) for sig in signatures}
    kernels = {}
    for key, text in source.items():
        signatures = _reflect(reflect, text, key)
        if signatures is None:
            return None
        found = {parse_signature(sig)[0]: sig for sig in signatures}
        sig = found.get(key) or (next(iter(found.values())) if len(found) == 1 else None)
        if sig is not None:
            kernels[key] = (key + sig[sig.index("(") :], text)
    return kernels


def compile(
    source: str | bytes,
    target: str | Target,
    functions: Sequence[str] | None = None,
    *,
    host: Module | None = None,
    validate: bool = True,
    filename: None | str | Mapping[str, str] = None,
    options: Sequence[str] = (),
    include_dirs: Sequence[str] = (),
) -> Module:
    """Compiles kernel `source` for `target`.

    `functions` are signatures such as
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)":
    buffer arguments end in '*', launch parameters follow ';'. Arguments may
    be named ("const float32* a"; a call may then pass them by keyword),
    `const` marks a buffer the kernel does not write, and an integer scalar
    "int32 grid = blockIdx.x" is filled from that launch parameter instead of
    being passed.

    Targets whose kernels declare their interface (see docs/formats/) read
    it from the source: `functions` may then be omitted (every kernel, with
    the kernel's names), list kernel names to pick some, or give signatures,
    each checked against the kernel's (argument count, buffer element and
    scalar types, names where both have them): a mismatch raises
    `modrt.SignatureError` showing both.

    For a device target the result is the real module when its runtime is
    loaded here, else a fallback module with identical bytes (`is_fallback`).
    With `host`, the device module is also imported into it.

    Source is checked here, runtime or not (see modrt._validate): OpenCL C
    with clang's OpenCL front end (and a build on a device where one is
    present), WGSL with naga; GLSL, CUDA C++ and HIP are compiled by their
    drivers. A failure raises `modrt.CompileError` naming the functions and
    `filename` (default `<function.ext>`) with the compiler's line:column
    messages, and no module is made. Source that cannot be checked here
    (Metal off macOS) gets a `modrt.SourceNotCheckedWarning`.
    `validate=False` skips the checks (source meant for a newer device
    compiler than the one here).

    `options` go to the target's compiler as they are (NVRTC or nvcc for
    cuda, hipcc for rocm), after `-I` for each of `include_dirs`; they are
    the target's `options` and `include_dirs` attributes, which a Target may
    also carry. A target whose compiler takes none refuses them.
    """
    tgt = target if isinstance(target, Target) else Target(target)
    if options or include_dirs:
        tgt = _with_compiler_options(tgt, options, include_dirs)
    from . import _validate

    # Reflectors run under the checks' switch and file name too: one that
    # parses the source reports a broken kernel as the checks would.
    with _validate.validating(validate, filename):
        functions = resolve_functions(tgt.kind, source, functions)
        if tgt.kind == "cpu":
            from . import _host_codegen

            return _imported(_host_codegen.compile_c(source, functions), host)
        driver = _DRIVERS.get(tgt.kind)
        if driver is None:
            raise ValueError(
                f"no codegen for target '{tgt.kind}'; known targets: {', '.join(['cpu'] + sorted(_DRIVERS))}"
            )
        _validate.check(tgt.kind, source, functions, filename)
        payload = driver(source, functions, tgt)
    return _imported(call(f"codegen.{tgt.kind}.create_module", payload), host)


def _with_compiler_options(tgt: Target, options: Sequence[str], include_dirs: Sequence[str]) -> Target:
    """`tgt` with `options` and `include_dirs` added to its attributes of those names."""
    if not getattr(_DRIVERS.get(tgt.kind), "takes_compiler_options", False):
        raise ValueError(
            f"target '{tgt.kind}' takes no compiler options (options=, include_dirs=): its source is "
            "compiled by the runtime or checked as it is"
        )
    if isinstance(options, str) or isinstance(include_dirs, str):
        raise TypeError("options and include_dirs are lists of strings, not one string")
    attrs = dict(tgt.attrs)
    attrs["options"] = [*attrs.get("options", ()), *map(str, options)]
    attrs["include_dirs"] = [*attrs.get("include_dirs", ()), *map(str, include_dirs)]
    return Target(tgt.kind, **attrs)


def _imported(module: Module, host: Module | None) -> Module:
    """`module`, imported into `host` when there is one."""
    if host is not None:
        host.import_module(module)
    return module
