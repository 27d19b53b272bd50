"""What a gateway's heap holds after load, by who allocated it. A gateway of
`connecta-bench serve-synthetic --connectors C --tools T` (100 x 100
unless told: the bench's "large" shape) runs under valgrind's massif; once
every connector's catalog is loaded (its `/health` says so) and two
seconds more have passed (the store writes a copy of each), a detailed
snapshot is taken ("catalogs loaded"); then IN_FLIGHT clients
(each with its own MCP session and kept-alive connection) make CALLS
direct `call_tool` calls each, and a second snapshot is taken ("after
load"). For each snapshot: the bytes live on the heap, and the largest
groups of them by allocation path, each path named by its first DEPTH
frames that are not the allocator, the standard library or tokio's task
plumbing, and one frame for consecutive copies of one function (so
`channel<rmcp::...> <- rmcp::...::spawn_with_ct ...`, not
`alloc::alloc::alloc <- ...`; a closure or an async body is named by
its file and line).

The gateway must be built with the `system-allocator` feature: massif
follows malloc, and the release binary's jemalloc is not malloc. Live
bytes do not depend on the allocator; RSS does (free pages an allocator
keeps, and its metadata), so compare RSS from the bench, and what holds
it from here.

Usage: python3 scripts/heap_after_load.py TARGET_DIR BINARY
           [--connectors C] [--tools T] [--calls N] [--in-flight N]
           [--depth K] [--top N] [--keep DIR]
TARGET_DIR holds connecta-bench; BINARY is the gateway built with
`--features system-allocator`. Run through scripts/heap-after-load, which
builds both. Needs python3 and valgrind (with vgdb).
"""

import argparse
import collections
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hot_functions import gateway_wrapper, synthetic_gateway, tail  # noqa: E402
from per_call import Session, address_for, request_for  # noqa: E402

# Frames that say how memory was allocated, not what for (frames in the
# standard library are left out by their location).
PLUMBING = re.compile(
    r"^(UnknownInlinedFun|alloc|allocate|alloc_impl|do_alloc|new_uninitialized|call_once|"
    r"do_call|catch_unwind|with_mut|with_budget|budget)\b|tokio::runtime::task|::harness::|"
    r"raw::poll|__rust|hashbrown::raw|fallible_with_capacity|with_capacity_and_hasher|"
    r"\b(malloc|realloc|calloc)\b|operator new|^mallocWithAlarm|^sqlite3(Mem|Db)?(Malloc|Realloc)|"
    r"^db(MallocRaw|Realloc)Finish")
# Closures, async bodies and inlined polls: named by where they are.
ANONYMOUS = re.compile(r"^(\{closure|\{async_fn|\{async_block|poll<|run<)")
NODE = re.compile(r"^\s*n(\d+): (\d+) (.*)$")
FRAME = re.compile(r"^0x[0-9A-Fa-f]+: ")
LOCATION = re.compile(r" \(([^()]*)\)$")


def massif_wrapper(work, binary, out_file, log):
    """A script that runs the gateway `binary` under massif, with vgdb on
    for snapshots on demand."""
    return gateway_wrapper(work, "gateway-under-massif", [
        "valgrind", "--tool=massif", "--vgdb=yes", "--vgdb-error=999999", "--depth=48",
        "--threshold=0.2", f"--massif-out-file={out_file}", binary], log)


def snapshot(pid, path):
    """A detailed snapshot of the running gateway into `path`."""
    try:
        done = subprocess.run(["vgdb", f"--pid={pid}", "detailed_snapshot", path],
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        sys.exit("vgdb did not answer in 5 minutes (can it ptrace the gateway? "
                 "see /proc/sys/kernel/yama/ptrace_scope)")
    if done.returncode != 0 or not os.path.exists(path):
        sys.exit(f"vgdb could not take a snapshot:\n{done.stdout}{done.stderr}")


def wait_for_catalogs(port, log, timeout=600):
    """Until `/health` lists every connector with its catalog loaded; exits
    on a connector whose catalog failed or a gateway that stopped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("GET", "/health")
            connectors = json.loads(c.getresponse().read())["connectors"]
            c.close()
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"the gateway's /health did not answer as expected ({e!r}):\n" + tail(log))
        failed = [x["id"] for x in connectors if x.get("catalog") is None and x.get("catalogError")]
        if failed:
            sys.exit(f"the catalog of {failed[0]} failed to load:\n" + tail(log))
        if connectors and all(x.get("catalog") is not None for x in connectors):
            return
        time.sleep(1)
    sys.exit("the catalogs did not load in 10 minutes:\n" + tail(log))


def frame_name(text):
    """How an allocation path names the frame `text` of a massif tree, or
    None for a frame that only says how memory was allocated."""
    if not FRAME.match(text):
        return None
    located = FRAME.sub("", text)
    loc = LOCATION.search(located)
    where = loc.group(1) if loc else ""
    name = located[:loc.start()] if loc else located
    if where.startswith("library/") or PLUMBING.search(name):
        return None
    if ANONYMOUS.match(name):
        if not where or where.startswith("src/runtime/"):  # tokio's tasks
            return None
        short = re.split(r"[#<]", name)[0]
        return f"{short}{'}' if short.startswith('{') else ''} ({where})"
    return name[:120]


def base_name(name):
    """The last path segment of a frame's name, without generics: inlined
    and outlined copies of one function share it."""
    return re.sub(r"<.*", "", name).rsplit("::", 1)[-1]


def holders(path, depth):
    """Live heap bytes of the snapshot in `path`, by allocation path."""
    lines = open(path).read().split("\n")
    trees = [i for i, line in enumerate(lines) if line.startswith("heap_tree=detailed")]
    if not trees:
        sys.exit(f"{path} has no detailed snapshot")
    by_path = collections.Counter()

    def walk(i, names):
        m = NODE.match(lines[i])
        if not m:
            sys.exit(f"unexpected line {i + 1} in {path}: {lines[i]!r}")
        children, size, text = int(m.group(1)), int(m.group(2)), m.group(3)
        name = frame_name(text)
        if name and len(names) < depth and not (names and base_name(names[-1]) == base_name(name)):
            names = names + [name]
        i += 1
        if children == 0:
            by_path[" <- ".join(names) or text[:120]] += size
            return i
        for _ in range(children):
            i = walk(i, names)
        return i

    walk(trees[-1] + 1, [])
    return by_path


def report(label, by_path, top):
    total = sum(by_path.values())
    print(f"\n## {label}: {total / 1e6:.2f} MB live on the heap\n")
    print("| MB | share | allocated by |")
    print("| ---: | ---: | --- |")
    for name, size in by_path.most_common(top):
        print(f"| {size / 1e6:.3f} | {100 * size / total:.1f}% | {name} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("target_dir")
    p.add_argument("binary")
    p.add_argument("--connectors", type=int, default=100)
    p.add_argument("--tools", type=int, default=100)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--in-flight", type=int, default=8)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--keep", help="a directory to keep the snapshots in")
    args = p.parse_args()
    if shutil.which("vgdb") is None:
        sys.exit("needs valgrind's vgdb (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="heap-after-load-") as work:
        log = os.path.join(work, "gateway.log")
        wrapper = massif_wrapper(work, os.path.abspath(args.binary),
                                 os.path.join(work, "massif.out"), log)
        call = request_for("direct", address_for(args.connectors, args.tools))
        loaded = os.path.join(work, "catalogs-loaded.massif")
        after = os.path.join(work, "after-load.massif")
        bench = os.path.join(args.target_dir, "connecta-bench")
        with synthetic_gateway(bench, wrapper, args.connectors, args.tools, log) as ready:
            wait_for_catalogs(ready["port"], log)
            time.sleep(2)  # the catalogs' copies written to the store
            snapshot(ready["pid"], loaded)
            failures = []

            def drive():
                try:
                    Session(ready["port"]).calls(call, args.calls)
                except Exception as e:  # reported below, with the gateway's log
                    failures.append(e)

            clients = [threading.Thread(target=drive) for _ in range(args.in_flight)]
            for c in clients:
                c.start()
            for c in clients:
                c.join()
            if failures:
                sys.exit(f"a call failed: {failures[0]}\n" + tail(log))
            snapshot(ready["pid"], after)
        print(f"# Heap of a {args.connectors} x {args.tools} gateway "
              f"({args.in_flight} clients x {args.calls} direct calls)")
        report("catalogs loaded", holders(loaded, args.depth), args.top)
        report("after load", holders(after, args.depth), args.top)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for f in (loaded, after):
                shutil.copy(f, args.keep)


if __name__ == "__main__":
    main()
