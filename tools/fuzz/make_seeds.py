"""Writes the seed corpora of the fuzz targets (//fuzz) from real modules.

    tools/bazel run //tools:python -- tools/fuzz/make_seeds.py fuzz/seeds

Every module kind gets the bytes of modules compiled here by modrt's own
codegen (C through the host compiler, OpenCL C, GLSL through glslang, CUDA,
MSL, WGSL, HIP through hipcc where it is installed); the payload fuzzer gets
the same bytes behind a shape byte, the artifact fuzzer .modrt files of module
trees, the signature fuzzer signature texts, the artifact signature fuzzer
those .modrt files signed and their signature blocks
(`make_seeds.py fuzz/seeds artifact_signature_fuzzer` writes only those).
Seeds are named by content, so rerunning the script is idempotent.
"""

from __future__ import annotations

import hashlib
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import modrt

SINGLE_BINARY, MULTI_SHADER = 0, 1

SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32)",
    "vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)",
    "scale(float64*, float64; blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, dyn_shared_mem)",
    "pack(uint8*, int8, int16, int64, uint16, uint32, uint64, bool; threadIdx.z, blockIdx.z)",
    "half(float16x4*, bfloat16*, float32x2)",
    "block(uniform uint32x4 p, const float32* x; blockIdx.x)",
    "noargs()",
]

C_KERNELS = {
    "vadd": (
        "void vadd(const float* a, const float* b, float* c, int n) {"
        " for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }",
        ["vadd(float32*, float32*, float32*, int32)"],
    ),
    "two": (
        "#include <stdint.h>\n"
        "void fill(int64_t* x, int64_t v, int n) { for (int i = 0; i < n; ++i) x[i] = v; }\n"
        "void axpy(double* y, const double* x, double a, int n) {"
        " for (int i = 0; i < n; ++i) y[i] += a * x[i]; }\n",
        ["fill(int64*, int64, int32)", "axpy(float64*, float64*, float64, int32)"],
    ),
}

OPENCL_KERNELS = {
    "vadd": (
        "__kernel void vadd(__global const float* a, __global const float* b,"
        " __global float* c, int n) { int i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }",
        ["vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"],
    ),
    "shared": (
        "__kernel void sum(__global float* out, __global const float* x, __local float* tmp) {"
        " tmp[get_local_id(0)] = x[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE);"
        " if (get_local_id(0) == 0) out[get_group_id(0)] = tmp[0]; }",
        ["sum(float32*, float32*; blockIdx.x, threadIdx.x, dyn_shared_mem)"],
    ),
}

GLSL_KERNELS = {
    "vadd": (
        "#version 450\nlayout(local_size_x = 64) in;\n"
        "layout(std430, binding = 0) buffer A { float a[]; };\n"
        "layout(std430, binding = 1) buffer B { float b[]; };\n"
        "layout(std430, binding = 2) buffer C { float c[]; };\n"
        "layout(push_constant) uniform P { int n; };\n"
        "void main() { uint i = gl_GlobalInvocationID.x; if (i < n) c[i] = a[i] + b[i]; }\n",
        ["vadd(float32*, float32*, float32*, int32; blockIdx.x)"],
    ),
}

CUDA_KERNELS = {
    "vadd": (
        'extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {'
        " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }",
        ["vadd(float32*, float32*, float32*, int32; blockIdx.x, threadIdx.x)"],
    ),
}

HIP_KERNELS = {
    name: ("#include <hip/hip_runtime.h>\n" + source, signatures) for name, (source, signatures) in CUDA_KERNELS.items()
}

MSL_KERNELS = {
    "vadd": (
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "kernel void vadd(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],"
        " device float* c [[buffer(2)]], uint i [[thread_position_in_grid]]) { c[i] = a[i] + b[i]; }\n",
        ["vadd(float32*, float32*, float32*; blockIdx.x, threadIdx.x)"],
    ),
}

WGSL_KERNELS = {
    "vadd": (
        "@group(0) @binding(0) var<storage, read> a: array<f32>;\n"
        "@group(0) @binding(1) var<storage, read> b: array<f32>;\n"
        "@group(0) @binding(2) var<storage, read_write> c: array<f32>;\n"
        "@compute @workgroup_size(64) fn vadd(@builtin(global_invocation_id) i: vec3<u32>) {"
        " c[i.x] = a[i.x] + b[i.x]; }\n",
        ["vadd(float32*, float32*, float32*; blockIdx.x)"],
    ),
    # The runtime's conventions: scalars in one uniform block after the
    # buffers, a workgroup size and workgroup memory set by override constants.
    "axpy": (
        "override block_x: u32 = 64;\n"
        "struct Args { alpha: f32, n: i32 }\n"
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
        "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
        "@group(0) @binding(2) var<uniform> args: Args;\n"
        "@compute @workgroup_size(block_x) fn axpy(@builtin(global_invocation_id) i: vec3<u32>) {"
        " if (i32(i.x) < args.n) { y[i.x] += args.alpha * x[i.x]; } }\n",
        ["axpy(float32*, float32*, float32, int32; blockIdx.x, threadIdx.x)"],
    ),
    "block_sum": (
        "override block_x: u32 = 64;\noverride dyn_shared_mem: u32 = 256;\n"
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
        "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n"
        "var<workgroup> s: array<f32, dyn_shared_mem / 4>;\n"
        "@compute @workgroup_size(block_x) fn block_sum(@builtin(local_invocation_id) l: vec3<u32>,"
        " @builtin(workgroup_id) w: vec3<u32>) { s[l.x] = x[w.x * block_x + l.x]; workgroupBarrier();"
        " if (l.x == 0u) { var t = 0.0; for (var k = 0u; k < block_x; k++) { t += s[k]; } out[w.x] = t; } }\n",
        ["block_sum(float32*, float32*; blockIdx.x, threadIdx.x, dyn_shared_mem)"],
    ),
}


def write_seed(directory: Path, data: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def compiled(kind: str, kernels: dict, source_of: Callable = lambda s: s) -> list[bytes]:
    out = []
    for name, (source, signatures) in kernels.items():
        try:
            out.append(modrt.compile(source_of(source), kind, signatures).save_to_bytes())
        except Exception as e:  # noqa: BLE001 - a missing tool only thins the corpus
            print(f"  {kind}/{name}: not compiled here ({type(e).__name__}: {e})", file=sys.stderr)
    return out


def artifacts() -> list[bytes]:
    """.modrt files: a host module alone, with an OpenCL import, with OpenCL,
    Vulkan and WebGPU imports, and a device module as the root."""
    from modrt import artifact

    def host() -> modrt.Module:
        source, signatures = C_KERNELS["vadd"]
        return modrt.compile(source, "cpu", signatures)

    out = [artifact.save(host())]
    with_opencl = host()
    for kernels, kind in ((OPENCL_KERNELS, "opencl"),):
        source, signatures = kernels["vadd"]
        modrt.compile(source, kind, signatures, host=with_opencl)
    out.append(artifact.save(with_opencl))
    many = host()
    for kernels, kind in ((OPENCL_KERNELS, "opencl"), (GLSL_KERNELS, "vulkan"), (WGSL_KERNELS, "webgpu")):
        source, signatures = kernels["vadd"]
        try:
            modrt.compile(source, kind, signatures, host=many)
        except Exception as e:  # noqa: BLE001 - a missing tool only thins the corpus
            print(f"  artifact: no {kind} import ({type(e).__name__}: {e})", file=sys.stderr)
    out.append(artifact.save(many))
    source, signatures = OPENCL_KERNELS["shared"]
    out.append(artifact.save(modrt.compile(source, "opencl", signatures)))
    return out


# The artifact_signature_fuzzer's key (fuzz/artifact_signature_fuzzer.cc):
# made for the harness, not a secret.
FUZZ_SIGNING_KEY = (
    "modrt ed25519 secret key c5a1cfc34fc1ea7623300f8ae25d9e52790d71fd4d22ce9d73ad923d6a5335c9"
    "67edeb031bdb5e49bf803f0dfb219e08cd662a14e3385be74c31b6e8bbc59bb6\n"
)


def signature_seeds(out: Path) -> None:
    """The artifact fuzzer's seeds as they are and signed with the fuzz key,
    and their signature blocks, as seeds of artifact_signature_fuzzer."""
    from modrt import artifact

    target = out / "artifact_signature_fuzzer"
    for path in sorted((out / "artifact_fuzzer").iterdir()):
        blob = path.read_bytes()
        signed = artifact.sign_bytes(blob, FUZZ_SIGNING_KEY)
        write_seed(target, blob)
        write_seed(target, signed)
        block = artifact.signature_block(signed)
        assert block is not None
        write_seed(target, block)
        write_seed(target, block.replace(b"algorithm ed25519", b"algorithm ml-dsa-65"))


def main(out: Path) -> int:
    warnings.simplefilter("ignore")
    host = compiled("cpu", C_KERNELS)
    modules = {
        "so": host,
        "opencl": compiled("opencl", OPENCL_KERNELS),
        "vulkan": compiled("vulkan", GLSL_KERNELS),
        "cuda": compiled("cuda", CUDA_KERNELS),
        "rocm": compiled("rocm", HIP_KERNELS),
        "metal": compiled("metal", MSL_KERNELS),
        "webgpu": compiled("webgpu", WGSL_KERNELS),
        # A Hexagon module is a prebuilt shared object: the host's stands in for its bytes.
        "hexagon": [
            modrt.compile(
                modrt.load_module_from_bytes("so", host[0]).inspect_source("so"), "hexagon", C_KERNELS["vadd"][1]
            ).save_to_bytes()
        ]
        if host
        else [],
    }
    shapes = {
        "so": SINGLE_BINARY,
        "opencl": SINGLE_BINARY,
        "cuda": SINGLE_BINARY,
        "rocm": SINGLE_BINARY,
        "hexagon": SINGLE_BINARY,
        "vulkan": MULTI_SHADER,
        "metal": MULTI_SHADER,
        "webgpu": MULTI_SHADER,
    }
    for kind, blobs in modules.items():
        for blob in blobs:
            write_seed(out / f"load_{kind}_fuzzer", blob)
            write_seed(out / "payload_fuzzer", bytes([shapes[kind]]) + blob)
        print(f"load_{kind}_fuzzer: {len(blobs)} modules", file=sys.stderr)
    # The host modules' shared objects, for the ELF check run before dlopen.
    for blob in host:
        write_seed(out / "elf_check_fuzzer", modrt.load_module_from_bytes("so", blob).inspect_source("so"))
    for blob in artifacts():
        write_seed(out / "artifact_fuzzer", blob)
    for sig in SIGNATURES:
        write_seed(out / "signature_fuzzer", sig.encode())
    signature_seeds(out)
    return 0


if __name__ == "__main__":
    if sys.argv[2:] == ["artifact_signature_fuzzer"]:
        signature_seeds(Path(sys.argv[1]))
        sys.exit(0)
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz/seeds")))
