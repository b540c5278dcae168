"""`modrt.compile`: dispatch to the codegen driver of the target's backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from . import _registry, _validate
from ._codegen import normalize_signature, parse_signature
from ._ffi import call
from ._registry import Reflector, language_of
from ._signature import check_signature
from .modules import Module
from .target import Target


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
    record = _registry.get(kind)
    reflect = None if record is None else record.reflector
    if reflect is None:
        return _given(kind, functions, "it does not read them from the kernel")
    wanted = [parse_signature(f)[0] if "(" in f else f.strip() for f in functions or ()]
    reflected = _reflected_kernels(reflect, source, wanted[0] if len(wanted) == 1 else None)
    if reflected is None:
        return _given(
            kind, functions, "this source does not declare its interface (e.g. PTX, which records no element types)"
        )
    fits = reflect.buffer_fits
    if functions is None:
        if isinstance(source, Mapping) and set(reflected) != set(source):
            unknown = [k for k in source if k not in reflected]
            raise ValueError(
                f"the {language_of(kind)} sources of {', '.join(unknown)} define no kernel of that name "
                "and not exactly one kernel"
            )
        if not reflected:
            raise ValueError(f"the {language_of(kind)} source defines no kernel")
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
                f"the {language_of(kind)} source has no kernel '{name}' (it defines: {', '.join(reflected) or 'none'})"
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
    name of their own (GLSL's entry point is always main) takes the function's name too."""
    if name and reflect.names_kernel:
        return reflect.read(text, name)
    return reflect.read(text)


def _reflected_kernels(
    reflect: Reflector, source: str | bytes | Mapping[str, str | bytes], only: str | None = None
) -> dict[str, tuple[str, str | bytes]] | None:
    """{kernel name: (its reflected signature, its source)}. With one source
    per function, each source's kernel of that name, else its only kernel,
    under the function's name; `only`: the one function asked for from a
    single source. None when a source does not declare its interface (the
    reflector answered None)."""
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

    Source is checked here, runtime or not, by the backend's `check` (see
    modrt._validate): OpenCL C with clang's OpenCL front end (and a build on
    a device where one is present), WGSL with naga; GLSL, CUDA C++ and HIP are compiled by their
    drivers. A failure raises `modrt.CompileError` naming the functions and
    `filename` (default `<function.ext>`) with the compiler's line:column
    messages, and no module is made. Source that cannot be checked here
    (Metal off macOS) gets a `modrt.SourceNotCheckedWarning`; warnings of
    a check that passes (clang's, for OpenCL C) are a `modrt.CompileWarning`
    holding them in full.
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
    # Reflectors run under the checks' switch and file name too: one that
    # parses the source reports a broken kernel as the checks would.
    with _validate.validating(validate, filename):
        functions = resolve_functions(tgt.kind, source, functions)
        if tgt.kind == "cpu":
            # Imported on use, not to hide a circle: its shlex imports re, which
            # `import modrt` would pay for (python/tests/import_graph_test.py).
            from . import _host_codegen

            return _imported(_host_codegen.compile_c(source, functions), host)
        record = _registry.get(tgt.kind)
        if record is None or record.codegen is None:
            known = sorted(name for name, r in _registry.records().items() if r.codegen is not None)
            raise ValueError(f"no codegen for target '{tgt.kind}'; known targets: {', '.join(['cpu', *known])}")
        _validate.check(tgt.kind, source, functions, filename)
        payload = record.codegen(source, functions, tgt)
    return _imported(call(f"codegen.{tgt.kind}.create_module", payload), host)


def _with_compiler_options(tgt: Target, options: Sequence[str], include_dirs: Sequence[str]) -> Target:
    """`tgt` with `options` and `include_dirs` added to its attributes of those names."""
    record = _registry.get(tgt.kind)
    if record is None or not record.takes_compiler_options:
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
