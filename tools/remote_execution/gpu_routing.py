"""The remote-execution demo's GPU routing checks: every test that asks for a
GPU (exec_properties gpu=...) has a worker that declares it, or the demo stops
before building, naming them; and a probe test asking for one runs only on
the workers that declare it."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import cluster as cl
from execution_log import digest_key
from verdicts import GPU_ROUTING

if TYPE_CHECKING:
    from demo import Demo

# A test that asks for a GPU, and nothing more (it needs none): the routing check's probe.
GPU_PROBE = "//tools/remote_execution:gpu_property_probe_test"
GPU_PROBE_RUNS = 4


def gpu_needs(demo: Demo) -> dict[str, str]:
    """{test label: the value of the gpu property it asks for}, for the
    patterns' tests whose exec_properties ask for one and that this
    build's flags leave compatible (an incompatible one is skipped, not run)."""

    def tests(pattern: str) -> str:
        # A wildcard leaves out tests tagged manual, as `bazel test` does; a named one is run.
        wildcard = pattern.endswith(("...", ":all", ":*", ":all-targets"))
        return f"(tests({pattern}) - attr(tags, '\\bmanual\\b', {pattern}))" if wildcard else f"tests({pattern})"

    positive = [tests(p) for p in demo.patterns if not p.startswith("-")]
    negative = [p[1:] for p in demo.patterns if p.startswith("-")]
    expression = f"({' + '.join(positive)})" + "".join(f" - {p}" for p in negative)
    asking = f"attr(exec_properties, {cl.GPU_PROPERTY}, {expression})"
    wanted = {cl.GPU_PROPERTY, f"test.{cl.GPU_PROPERTY}"}
    query = demo.run_bazel(
        [*demo.bazel, "query", "--output=streamed_jsonproto", asking], capture_output=True, text=True
    )
    if query.returncode != 0:
        raise RuntimeError(f"bazel query of the tests that need a GPU failed:\n{query.stderr[-3000:]}")
    needs = {}
    for line in query.stdout.splitlines():
        rule = json.loads(line).get("rule", {})
        for attribute in rule.get("attribute", []):
            if attribute.get("name") == "exec_properties":
                for item in attribute.get("stringDictValue", []):
                    if item.get("key") in wanted:
                        needs[rule["name"]] = item.get("value", "")
    if not needs:
        return needs
    compatible = demo.run_bazel(
        [
            *demo.bazel,
            "cquery",
            *demo.flags(demo.scratch / "cquery.exec.json"),
            "--output=starlark",
            "--starlark:expr=str(target.label) if 'IncompatiblePlatformProvider' not in providers(target) else ''",
            asking,
        ],
        capture_output=True,
        text=True,
    )
    if compatible.returncode != 0:
        raise RuntimeError(f"bazel cquery of the tests that need a GPU failed:\n{compatible.stderr[-3000:]}")
    kept = {line.strip().removeprefix("@@").removeprefix("@") for line in compatible.stdout.splitlines()}
    return {label: value for label, value in needs.items() if label in kept}


def tests_served(demo: Demo) -> bool:
    """Every test that asks for a GPU has a worker that declares it; else
    the demo says which, and why it stops before building."""
    needs = gpu_needs(demo)
    declared = {w.properties.get(cl.GPU_PROPERTY) for w in demo.cluster.worker_list if w.alive()} - {None}
    print(
        f"== tests that ask for a GPU: {len(needs)}"
        + (f" ({', '.join(f'{t}: {cl.GPU_PROPERTY}={v}' for t, v in sorted(needs.items()))})" if needs else "")
        + f"; workers declaring one: {', '.join(f'{cl.GPU_PROPERTY}={v}' for v in sorted(declared)) or 'none'}",
        flush=True,
    )
    if not needs:
        return True
    unserved = {t: v for t, v in needs.items() if v not in declared}
    workers = ", ".join(w.name for w in demo.cluster.worker_list)
    return demo.verdicts.check(
        GPU_ROUTING,
        not unserved,
        "every test that asks for a GPU has a worker that declares it"
        if not unserved
        else "no build: "
        + "; ".join(f"{t} asks for {cl.GPU_PROPERTY}={v}" for t, v in sorted(unserved.items()))
        + f", and no worker ({workers}) declares it, so BuildGrid would queue it until one joins"
        " and the build would not end. Add a worker that declares it (here --hosts N --gpu-hosts 1;"
        " on a GPU machine `cluster -- --join ... --gpu-workers 1`), or leave the test out",
    )


def check_routing(demo: Demo) -> None:
    """The probe asking for a GPU runs only on the workers that declare one."""
    gpu_hosts = [w.name for w in demo.cluster.worker_list if w.properties.get(cl.GPU_PROPERTY)]
    print(
        f"== GPU routing: {GPU_PROBE} asks for {cl.GPU_PROPERTY}=cuda and runs {GPU_PROBE_RUNS} times"
        f" (--runs_per_test, --noremote_accept_cached); declaring it: {', '.join(map(demo.where, gpu_hosts))}",
        flush=True,
    )
    since = time.time()
    rc, output, spawns, _ = run_probe(demo)
    ran = demo.show_workers(spawns, since)
    demo.verdicts.build("the GPU routing build", rc, output)
    asking = [
        s
        for s in spawns
        if s.get("runner") == "remote"
        and {p.get("name"): p.get("value") for p in s.get("platform", {}).get("properties", [])}.get(cl.GPU_PROPERTY)
    ]
    # Each run is a test action (test-setup.sh) and, here, the action that
    # writes its XML report; both ask for the GPU (the "test" exec group).
    runs = [s for s in asking if s.get("commandArgs", [""])[0].endswith("test-setup.sh")]
    elsewhere = [demo.where(ran.get(digest_key(s))) for s in asking if ran.get(digest_key(s)) not in gpu_hosts]
    demo.verdicts.check(
        GPU_ROUTING,
        len(runs) == GPU_PROBE_RUNS and not elsewhere,
        f"{len(runs)} runs of the probe: {len(asking) - len(elsewhere)} of the {len(asking)} actions asking"
        f" for {cl.GPU_PROPERTY}=cuda ran on a host that declares it"
        + (f"; others ran on {', '.join(elsewhere)}" if elsewhere else ""),
    )


def run_probe(demo: Demo) -> tuple[int, str, list[dict], float]:
    patterns, demo.patterns = demo.patterns, [GPU_PROBE]
    try:
        return demo.bazel_test("gpu", ["--noremote_accept_cached", f"--runs_per_test={GPU_PROBE_RUNS}"])
    finally:
        demo.patterns = patterns
