"""modrt run: load a .modrt file and run one of its functions.

usage: modrt run --function=NAME [--device=KIND[:INDEX]] [--outputs=I,...]
                 [--save=DIR] [--time] [--repeat=N] [--trusted-key=KEY.pub ...]
                 [--no-host-code] FILE.modrt -- ARG ...

One ARG per argument of the function's signature, then one per launch
parameter:
  buffer argument    a .npy file, or a shape such as 4096 or 64x64 (random data
                     of the argument's dtype)
  scalar argument    a number
  launch parameter   an integer (grid and block sizes, dyn_shared_mem bytes)

The outputs (by default the last buffer argument) are printed, or saved as
arg<I>.npy under --save. --time reports the wall time of each call.

--trusted-key (repeatable; default: the files in MODRT_TRUSTED_KEYS) requires
the file to be signed by one of the keys; --no-host-code refuses a file holding
a host module (native code). Both are checked before anything is loaded.
"""

from __future__ import annotations

import os
import time
from typing import Any

from . import _common
from ._flags import FLAGS, define


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_string, "function", None, "The function to run.")
    define(
        flags.DEFINE_string,
        "device",
        None,
        "Device as KIND or KIND:INDEX (default: the kind of the module holding the function, index 0).",
    )
    define(flags.DEFINE_list, "outputs", None, "Indices of the arguments to print or save (default: the last buffer).")
    define(flags.DEFINE_string, "save", None, "Directory to save the outputs to, as arg<I>.npy.")
    define(flags.DEFINE_bool, "time", False, "Report the wall time of each call (after one warm-up call).")
    define(flags.DEFINE_integer, "repeat", 5, "Calls to time with --time.", lower_bound=1)
    define(flags.DEFINE_integer, "seed", 0, "Seed of the random inputs.")
    define(
        flags.DEFINE_multi_string,
        "trusted-key",
        None,
        "A public key file (KEYFILE.pub from `modrt keygen`); repeatable. The artifact must be signed by one "
        "of them (default: the files in MODRT_TRUSTED_KEYS; none: no signature required).",
    )
    define(
        flags.DEFINE_bool,
        "no-host-code",
        False,
        "Refuse an artifact holding a host module (kind so: native code loaded into this process). "
        "Without it: MODRT_ALLOW_HOST_CODE decides, itself allowed by default.",
    )


def _parse_signature(signature: str) -> tuple[list[tuple[str, bool]], list[str]]:
    """([(dtype, is_buffer)] of the arguments a caller passes, launch tags)."""
    from modrt._codegen import parse_signature

    _, args, tags = parse_signature(signature)
    return [(a.dtype, a.is_buffer) for a in args if not a.launch_tag], tags


def _buffer(np: Any, text: str, dtype: str, rng: Any, index: int) -> Any:
    if text.endswith(".npy"):
        array = np.load(text)
        if str(array.dtype) != dtype:
            raise ValueError(f"argument {index}: {text} holds {array.dtype}, the signature wants {dtype}")
        return array
    try:
        shape = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"argument {index}: '{text}' is neither a .npy file nor a shape like 1024 or 64x64") from None
    if dtype.startswith("float") or dtype.startswith("bfloat"):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 100, shape).astype(dtype)


def _find(manifest: Any, name: str) -> tuple[Any, Any]:
    for m in manifest.modules:
        for f in m.functions:
            if f.name == name:
                return m, f
    held = [f.name for m in manifest.modules for f in m.functions]
    raise ValueError(f"no function '{name}' in this artifact; it has: {', '.join(held)}")


def _device(modrt: Any, spec: str | None, kind: str) -> Any:
    if spec is None:
        return modrt.device("cpu" if kind == "so" else kind)
    device_kind, _, index = spec.partition(":")
    return modrt.device(device_kind, int(index or 0))


def main(argv: list[str]) -> int:
    if not argv:
        return _common.fail("run needs a .modrt file", 2)
    if not FLAGS.function:
        return _common.fail("run needs --function", 2)
    path, values = argv[0], argv[1:]
    modrt = _common.import_modrt()
    import numpy as np

    try:
        # Trust first: a refused file gets no further than its manifest.
        trusted_keys = FLAGS["trusted-key"].value or modrt.artifact.trusted_keys_from_env()
        allow_host_code = modrt.artifact.resolve_allow_host_code(False if FLAGS["no-host-code"].value else None)
        manifest = modrt.artifact.read_manifest(path, trusted_keys=trusted_keys or None)
        if not allow_host_code:
            modrt.artifact.check_no_host_code(manifest)
        entry, function = _find(manifest, FLAGS.function)
        if function.signature is None:
            raise ValueError(f"{FLAGS.function} has no recorded signature (opaque {entry.kind} module)")
        arg_types, tags = _parse_signature(function.signature)
        if len(values) != len(arg_types) + len(tags):
            raise ValueError(
                f"{function.signature} takes {len(arg_types)} arguments and {len(tags)} launch parameters, "
                f"got {len(values)} values"
            )
        dev = _device(modrt, FLAGS.device, entry.kind)
        if not dev.exist:
            raise ValueError(f"device {dev} does not exist here: {dev.unavailable_reason}")
        module = modrt.load_module(path, trusted_keys=trusted_keys, allow_host_code=allow_host_code)
        fn = module[FLAGS.function]
        rng = np.random.default_rng(FLAGS.seed)
        host: dict[int, Any] = {}
        call_args: list[Any] = []
        for i, ((dtype, is_buffer), text) in enumerate(zip(arg_types, values)):
            if is_buffer:
                host[i] = _buffer(np, text, dtype, rng, i)
                call_args.append(modrt.tensor(host[i], dev))
            else:
                call_args.append(float(text) if dtype.startswith("float") else int(text, 0))
        call_args += [int(v, 0) for v in values[len(arg_types) :]]
        outputs = [int(i) for i in FLAGS.outputs] if FLAGS.outputs else [max(host)] if host else []
        for i in outputs:
            if i not in host:
                raise ValueError(f"--outputs: argument {i} is not a buffer of {function.signature}")
        fn(*call_args)
        dev.sync()
        if FLAGS.time:
            times = []
            for _ in range(FLAGS.repeat):
                start = time.perf_counter()
                fn(*call_args)
                dev.sync()
                times.append(time.perf_counter() - start)
            print(
                f"{FLAGS.function} on {dev}: {len(times)} calls, "
                f"min {min(times) * 1e3:.3f} ms, mean {sum(times) / len(times) * 1e3:.3f} ms"
            )
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RuntimeError) as e:
        return _common.fail(str(e))
    for i in outputs:
        result = call_args[i].numpy()
        if FLAGS.save:
            os.makedirs(FLAGS.save, exist_ok=True)
            target = os.path.join(FLAGS.save, f"arg{i}.npy")
            np.save(target, result)
            print(f"arg {i}: {result.dtype}{list(result.shape)} saved to {target}")
        else:
            print(f"arg {i}: {result.dtype}{list(result.shape)}")
            print(np.array2string(result, threshold=20))
    return 0
