"""Regenerates the real compilers' kernels beside this file and in
backends/cuda/testdata/ (the tests use them as emitted, unchanged).

    python3 -m venv /tmp/v && /tmp/v/bin/pip install tinygrad==0.14.0 apache-tvm==0.27.0.post1
    DEV=NULL NVRTC_PATH=<libnvrtc.so.12> /tmp/v/bin/python backends/opencl/testdata/generate.py

(tinygrad's CUDA renderer loads NVRTC when it is made; it compiles nothing here.)
"""

import os

import tvm
from tinygrad import Tensor, Variable, dtypes
from tinygrad.codegen import to_program
from tinygrad.helpers import Target
from tinygrad.renderer.cstyle import CUDARenderer, OpenCLRenderer
from tinygrad.uop.ops import Ops
from tvm import te

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_DIR = os.path.join(HERE, "..", "..", "cuda", "testdata")


def tinygrad_kernels(t, renderer):
    """The source of each kernel tinygrad renders for tensor `t`."""
    for call in t.linear_with_vars()[0].toposort():
        if call.op is Ops.CALL and call.src[0].op is Ops.SINK:
            program = to_program(call.src[0], renderer)
            yield next(s.arg for s in program.src if s.op is Ops.SOURCE)


def tinygrad_cases():
    yield "add", Tensor.empty(1000) + Tensor.empty(1000)
    yield "sum_rows", (Tensor.empty(64, 32) + Tensor.empty(32)).sum(axis=1)
    yield "half_mul", Tensor.empty(256, dtype=dtypes.half) * Tensor.empty(256, dtype=dtypes.half)
    yield "sym_exp2", Tensor.empty(128)[: Variable("n", 1, 128).bind(40)].exp2()


def tvm_kernel(func, target):
    mod = tvm.IRModule({"main": func})
    with tvm.target.Target(target):
        mod = tvm.s_tir.transform.DefaultGPUSchedule()(mod)
    lib = tvm.compile(mod, target=target)
    return (lib.imports if hasattr(lib, "imports") else lib.mod.imports)[0].inspect_source()


def tvm_cases():
    m = te.placeholder((64, 128), "float32", name="M")
    k = te.reduce_axis((0, 128), "k")
    yield "row_sum", te.create_prim_func([m, te.compute((64,), lambda i: te.sum(m[i, k], axis=k), name="S")])
    n = te.var("n")
    a = te.placeholder((n,), "float32", name="A")
    b = te.placeholder((n,), "int32", name="B")
    yield "add_int_dyn", te.create_prim_func([a, b, te.compute((n,), lambda i: a[i] + b[i].astype("float32"))])


def tvm_cuda_only_cases():
    # PoCL's CPU device has no cl_khr_fp16, which TVM's OpenCL half kernels require.
    n = te.var("n")
    a = te.placeholder((n,), "float32", name="A")
    b = te.placeholder((n,), "float16", name="B")
    yield "add_half_dyn", te.create_prim_func([a, b, te.compute((n,), lambda i: a[i] + b[i].astype("float32"))])


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    renderers = {"cl": OpenCLRenderer(Target("CL")), "cu": CUDARenderer(Target("CUDA", arch="sm_75"))}
    for ext, renderer in renderers.items():
        # Tensors are made anew for each renderer: scheduling one consumes its graph.
        for name, t in tinygrad_cases():
            (source,) = tinygrad_kernels(t, renderer)
            write(os.path.join(HERE if ext == "cl" else CUDA_DIR, f"tinygrad_{name}.{ext}"), source)
    for name, func in tvm_cases():
        write(os.path.join(HERE, f"tvm_{name}.cl"), tvm_kernel(func, "opencl"))
        write(os.path.join(CUDA_DIR, f"tvm_{name}.cu"), tvm_kernel(func, "cuda"))
    for name, func in tvm_cuda_only_cases():
        write(os.path.join(CUDA_DIR, f"tvm_{name}.cu"), tvm_kernel(func, "cuda"))


if __name__ == "__main__":
    main()
