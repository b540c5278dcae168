"""@python_headers: the C headers of the `python3` that runs the build's Python.

Python extension modules must be built for exactly the interpreter that loads
them; in the toolchain root that is Debian's python3 (with python3-dev), the
same one rules_python's system toolchain runs.
"""

def _python_headers_impl(rctx):
    result = rctx.execute([
        "python3",
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['include'])",
    ])
    if result.return_code != 0:
        fail("python_headers: cannot run python3: " + result.stderr)
    include = result.stdout.strip()
    if not rctx.path(include + "/Python.h").exists:
        fail("python_headers: no %s/Python.h (install python3-dev)" % include)
    rctx.symlink(include, "include")
    rctx.file("BUILD.bazel", """\
cc_library(
    name = "python_headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
    visibility = ["//visibility:public"],
)
""")

_python_headers_repo = repository_rule(
    implementation = _python_headers_impl,
    environ = ["PATH"],
    local = True,
)

def _python_headers_ext_impl(_mctx):
    _python_headers_repo(name = "python_headers")

python_headers = module_extension(implementation = _python_headers_ext_impl)
