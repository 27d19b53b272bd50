"""Writes crates/connecta/link/hot-functions.txt: the functions a sandbox
worker and a gateway run, which build.rs has the linker lay out first in
`.text` (docs/performance.md, "The binary's own pages").

Three sources, in this order in the file:
1. a sandbox worker under valgrind's callgrind, driven over its protocol
   with the kinds of programs agents send (every function it ran, the most
   instructions first);
2. a gateway under callgrind over the synthetic downstream, driven with
   each meta-tool on two protocol revisions, four clients at once (the
   functions the worker did not run);
3. `perf record` of every process during a quick benchmark run of the
   native binary: functions that ran there and in neither run above (code
   chosen by CPU features valgrind does not emulate, paths only load takes).

Run through scripts/hot-functions, which builds the release binaries first.
Needs valgrind, perf and python3.
"""

import collections
import contextlib
import glob
import http.client
import json
import os
import re
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates/connecta/link/hot-functions.txt")
HEADER = """\
# Functions a sandbox worker and a gateway run, laid out first in .text by
# build.rs (--symbol-ordering-file). Made by scripts/hot-functions; see
# docs/performance.md, "The binary's own pages". Worker functions first,
# then the gateway's, then those only a benchmark run's samples found.
# Most names carry a hash of the compiler and of Cargo.lock: a test
# requires the line below to match the build (make the list again if not).
"""
MADE_FOR = "# made for: "


def made_for():
    """What build.rs compares: rustc's version line and Cargo.lock's
    FNV-1a 64."""
    version = subprocess.run(["rustc", "-vV"], check=True, capture_output=True,
                             text=True).stdout.splitlines()[0]
    h = 0xcbf29ce484222325
    with open(os.path.join(ROOT, "Cargo.lock"), "rb") as f:
        for b in f.read():
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{version}; Cargo.lock {h:016x}"
ADDRESS = "connector_0.lookup_record_1"


def callgrind(out_file, demangle=False):
    return (["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] +
            ([] if demangle else ["--demangle=no"]) + ["--dump-line=no"])


def gateway_wrapper(work, name, command, log):
    """A script `work/name` that runs `command` (a gateway binary and what
    runs it, such as valgrind) with serve-synthetic's arguments, its stderr
    to `log`: for serve-synthetic's --connecta-bin."""
    wrapper = os.path.join(work, name)
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec " + shlex.join(command) + f' "$@" 2>>{shlex.quote(log)}\n')
    os.chmod(wrapper, 0o755)
    return wrapper


def callgrind_wrapper(work, binary, out_file, log, demangle=False):
    """A script that runs the gateway `binary` under callgrind."""
    return gateway_wrapper(work, "gateway-under-callgrind",
                           callgrind(out_file, demangle) + [binary], log)


@contextlib.contextmanager
def synthetic_gateway(bench, connecta_bin, connectors, tools, log):
    """`connecta-bench serve-synthetic` with the gateway `connecta_bin`:
    yields its ready line (`port`, `pid`); kills both when done."""
    serve = subprocess.Popen([bench, "serve-synthetic", "--connectors", str(connectors),
                              "--tools", str(tools), "--connecta-bin", connecta_bin,
                              "--ready-timeout", "900"],
                             stdout=subprocess.PIPE, text=True)
    ready = None
    try:
        for line in serve.stdout:
            if '"port"' in line:
                ready = json.loads(line)
                break
        if ready is None:
            sys.exit("the gateway did not start:\n" + tail(log))
        yield ready
    finally:
        if ready is not None:
            try:
                os.kill(ready["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
        serve.terminate()
        serve.wait()


NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def self_costs(path):
    """Instructions each function ran itself, from a callgrind file."""
    cost = collections.Counter()
    ids = {}
    fn = None
    after_call = False

    def name(text):
        m = NAME.match(text)
        if not m:
            return text
        if m.group(2) is not None:
            ids[m.group(1)] = m.group(2)
        return ids.get(m.group(1), text)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = name(line[3:])
                cost[fn] += 0
                after_call = False
            elif line.startswith("cfn="):
                cost[name(line[4:])] += 0
            elif line.startswith("calls="):
                after_call = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                if after_call:
                    after_call = False
                    continue
                parts = line.split()
                if fn and len(parts) >= 2 and parts[1].isdigit():
                    cost[fn] += int(parts[1])
    return cost


def by_cost(cost):
    return [n for n, _ in sorted(cost.items(), key=lambda kv: (-kv[1], kv[0]))]


# --- 1. a sandbox worker ------------------------------------------------

LIMITS = {
    "heap_bytes": 67108864, "stack_bytes": 1048576, "cpu_budget_ms": 60000,
    "max_arg_bytes": 262144, "max_result_bytes": 327680,
    "max_inflight_calls": 256, "max_log_bytes": 65536,
    "max_value_bytes": 8388608, "address_space_margin_bytes": 268435456,
}
BINDINGS = [{"global": "connecta",
             "functions": ["search", "describe", "call", "batch", "emit", "__callNamespace"]}]
PROGRAMS = [
    f'async () => (await connecta.call("{ADDRESS}", {{value: 1}})).value',
    "async () => 1",
    f'async () => {{ const r = await Promise.all([1, 2, 3].map(i => connecta.call("{ADDRESS}", {{value: i}}))); return r.length; }}',
    "async () => (await connector_0.lookup_record_1({value: 2})).value",
    'async () => { console.log("seen", {a: 1}); return [1, "x", {b: null}]; }',
    'async () => { throw new Error("boom"); }',
    'async () => { const hits = await connecta.search("record"); return hits.length; }',
    f'async () => await connecta.batch([{{address: "{ADDRESS}", args: {{value: 1}}}}])',
    "async () => { let s = 0; for (let i = 0; i < 1000; i++) s += i; return JSON.stringify({s}).length; }",
    "return 1 + 1",
    "async () => { const m = new Map([[1, 2]]); return [...m.keys()].map(x => x * 2); }",
    'async () => { try { await connecta.call("nowhere.tool", {}); } catch (e) { return e.code; } }',
]


def drive_worker(binary, work, programs=PROGRAMS, rounds=10, demangle=False):
    """Runs each of `programs` `rounds` times on a worker under callgrind
    (its start included) and returns the dump's path."""
    out_file = os.path.join(work, f"worker.{rounds}.callgrind")
    # Hardening (seccomp) is off: valgrind's own system calls would be refused.
    log = os.path.join(work, "worker.log")
    with open(log, "w") as err:
        p = subprocess.Popen(callgrind(out_file, demangle) + [binary, "__sandbox-worker"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)

    def send(message):
        body = json.dumps(message).encode()
        p.stdin.write(struct.pack("<I", len(body)) + body)
        p.stdin.flush()

    def receive():
        head = p.stdout.read(4)
        if len(head) < 4:
            p.kill()
            sys.exit("the worker under valgrind ended early:\n" + tail(log))
        return json.loads(p.stdout.read(struct.unpack("<I", head)[0]))

    send({"init": {"limits": LIMITS, "harden": False, "shortcuts": {
        "global": "connecta", "function": "__callNamespace",
        "aliases": [["connector_0", "connector_0"]]}}})
    receive()
    for _ in range(rounds):
        for program in programs:
            send({"run": {"program": program, "bindings": BINDINGS}})
            while True:
                message = receive()
                if "done" in message:
                    break
                call = message.get("call")
                if call is None:
                    continue
                if call["args"] and call["args"][0] == "nowhere.tool":
                    send({"reject": {"id": call["id"], "error": {"message": "no such tool"}}})
                elif call["function"] == "search":
                    send({"resolve": {"id": call["id"], "value": [{"address": ADDRESS}]}})
                else:
                    send({"resolve": {"id": call["id"], "value": {"value": 1}}})
    p.stdin.close()
    p.wait()
    return out_file


# --- 2. a gateway -------------------------------------------------------

def requests_for(version):
    code_one = f'async () => (await connecta.call("{ADDRESS}", {{value: 1}})).value'
    code_many = (f'async () => {{ const r = await Promise.all([1, 2, 3].map(i => '
                 f'connecta.call("{ADDRESS}", {{value: i}}))); return r.length; }}')
    calls = [
        ("search_tools", {"query": "lookup record", "includeSchemas": "compact"}),
        ("search_tools", {"query": "record", "includeSchemas": "json"}),
        ("call_tool", {"address": ADDRESS, "args": {"value": 1}}),
        ("call_tool", {"address": ADDRESS, "args": {"value": 1}, "resultMode": "value"}),
        ("call_tool", {"address": "nowhere.tool", "args": {}}),
        ("execute_code", {"code": code_one}),
        ("execute_code", {"code": code_many}),
        ("execute_code", {"code": "async () => { throw new Error('boom'); }"}),
        ("describe_tools", {"addresses": [ADDRESS]}),
    ]
    out = [{"method": "tools/list"}, {"method": "ping"}]
    out += [{"method": "tools/call", "params": {"name": n, "arguments": a}} for n, a in calls]
    return out


def client(port, version, rounds):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    headers = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}

    def post(body, h):
        c.request("POST", "/mcp", json.dumps(body), h)
        r = c.getresponse()
        r.read()
        if r.status not in (200, 202):
            raise RuntimeError(f"{body.get('method')}: HTTP {r.status}")
        return r

    r = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "hot-functions", "version": "1"}}}, headers)
    h = dict(headers)
    if r.getheader("mcp-session-id"):
        h["mcp-session-id"] = r.getheader("mcp-session-id")
    h["mcp-protocol-version"] = version
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, h)
    n = 1
    for _ in range(rounds):
        for request in requests_for(version):
            n += 1
            post(dict(request, jsonrpc="2.0", id=n), h)


def drive_gateway(bench, binary, work):
    log = os.path.join(work, "gateway.log")
    wrapper = callgrind_wrapper(work, binary, os.path.join(work, "gateway.%p.callgrind"), log)
    with synthetic_gateway(bench, wrapper, 2, 100, log) as ready:
        errors = []

        def one_client(version):
            try:
                client(ready["port"], version, 3)
            except Exception as e:  # reported below, after the others end
                errors.append(f"{version}: {e}")

        threads = [threading.Thread(target=one_client, args=(v,))
                   for v in ["2025-06-18", "2025-11-25"] * 2]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            sys.exit("driving the gateway failed: " + "; ".join(errors))
        # callgrind writes its file when the gateway exits.
        os.kill(ready["pid"], signal.SIGTERM)
        for _ in range(1200):
            try:
                os.kill(ready["pid"], 0)
            except ProcessLookupError:
                break
            threading.Event().wait(0.5)
        else:
            sys.exit("the gateway under valgrind did not stop within 600 s")
    cost = collections.Counter()
    for path in glob.glob(os.path.join(work, "gateway.*.callgrind")):
        cost.update(self_costs(path))
    return cost


def tail(path):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-20:])
    except OSError:
        return "(no log)"


# --- 3. samples of a benchmark run --------------------------------------

def sampled(bench, binary, work):
    data = os.path.join(work, "bench.perf")
    subprocess.run(["perf", "record", "-F", "4999", "-a", "-o", data, "--",
                    bench, "run", "--quick", "--connecta-bin", binary,
                    "--out-dir", os.path.join(work, "bench")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report = subprocess.run(["perf", "report", "-i", data, "--dsos", os.path.basename(binary),
                             "--sort", "sym", "-q", "-g", "none", "-F", "sample,sym",
                             "--no-demangle"],
                            check=True, capture_output=True, text=True).stdout
    cost = collections.Counter()
    for line in report.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].isdigit():
            cost[parts[2]] += int(parts[0])
    return cost


def functions_in(binary):
    out = subprocess.run(["nm", "--defined-only", binary],
                         check=True, capture_output=True, text=True).stdout
    return {p[2] for p in (line.split() for line in out.splitlines())
            if len(p) == 3 and p[1] in "tTwW"}


def main():
    release = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release"))
    binary = os.path.join(release, "connecta")
    bench = os.path.join(release, "connecta-bench")
    known = functions_in(binary)
    with tempfile.TemporaryDirectory(prefix="hot-functions-") as work:
        print("a sandbox worker under callgrind…", flush=True)
        worker = by_cost(self_costs(drive_worker(binary, work)))
        print("a gateway under callgrind…", flush=True)
        gateway = by_cost(drive_gateway(bench, binary, work))
        print("samples of a quick benchmark run…", flush=True)
        samples = by_cost(sampled(bench, binary, work))
    for what, found in [("worker", worker), ("gateway", gateway), ("samples", samples)]:
        if not set(found) & known:
            sys.exit(f"no function of this binary in the {what} run: nothing written")
    listed, seen = [], set()
    for name in worker + gateway + samples:
        if name in known and name not in seen:
            seen.add(name)
            listed.append(name)
    with open(OUT, "w") as f:
        f.write(HEADER)
        f.write(MADE_FOR + made_for() + "\n")
        f.write("\n".join(listed) + "\n")
    print(f"{len(listed)} functions (worker {len(set(worker) & known)}, "
          f"gateway {len(set(gateway) & known)}, sampled {len(set(samples) & known)}) "
          f"written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
