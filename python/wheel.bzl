"""The modrt wheel: Python sources, and the selected DSOs under modrt/lib/.

rules_python's py_wheel needs its wheelmaker tool (@rules_python//tools),
which Debian's offline rules_python does not ship; this rule writes the same
kind of wheel with python/build_wheel.py.
"""

def _wheel_path(f, strip_prefixes):
    path = f.short_path
    if path.startswith("../"):
        path = path.split("/", 2)[2]
    for prefix in strip_prefixes:
        if path.startswith(prefix):
            return path[len(prefix):]
    return path

def _modrt_wheel_impl(ctx):
    name = "%s-%s-%s-%s-%s.whl" % (ctx.attr.distribution, ctx.attr.version, ctx.attr.python_tag, ctx.attr.abi, ctx.attr.platform)
    out = ctx.actions.declare_file(name)
    args = ctx.actions.args()
    args.add("--out", out)
    args.add("--name", ctx.attr.distribution)
    args.add("--version", ctx.attr.version)
    args.add("--tag", "%s-%s-%s" % (ctx.attr.python_tag, ctx.attr.abi, ctx.attr.platform))
    args.add("--summary", ctx.attr.summary)
    args.add("--python_requires", ctx.attr.python_requires)
    args.add_all(ctx.attr.requires, before_each = "--requires")
    args.add_all(["%s=%s" % kv for kv in ctx.attr.console_scripts.items()], before_each = "--console_script")
    inputs = []
    for dep in ctx.attr.deps:
        for f in dep[PyInfo].transitive_sources.to_list():
            args.add("--file", "%s=%s" % (_wheel_path(f, ctx.attr.strip_path_prefixes), f.path))
            inputs.append(f)
    for target in ctx.attr.libs:
        for f in target[DefaultInfo].files.to_list():
            if f.basename.endswith(".so"):
                # modrt._ffi.find_library looks in the package's own lib/ directory.
                args.add("--file", "modrt/lib/%s=%s" % (f.basename, f.path))
                inputs.append(f)
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = inputs,
        outputs = [out],
        mnemonic = "ModrtWheel",
        progress_message = "Building wheel %s" % name,
    )
    return [DefaultInfo(files = depset([out]))]

modrt_wheel = rule(
    implementation = _modrt_wheel_impl,
    doc = "A wheel of the .py files of `deps` and of the `libs` DSOs, at modrt/lib/<name>.",
    attrs = {
        "abi": attr.string(default = "none"),
        "console_scripts": attr.string_dict(),
        "deps": attr.label_list(providers = [PyInfo]),
        "distribution": attr.string(mandatory = True),
        "libs": attr.label_list(),
        "platform": attr.string(mandatory = True),
        "python_requires": attr.string(default = ">=3.9"),
        "python_tag": attr.string(default = "py3"),
        "requires": attr.string_list(),
        "strip_path_prefixes": attr.string_list(),
        "summary": attr.string(),
        "version": attr.string(mandatory = True),
        "_builder": attr.label(default = ":build_wheel", executable = True, cfg = "exec"),
    },
)
