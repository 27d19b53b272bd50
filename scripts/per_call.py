"""What a gateway spends per call, two ways, each over a gateway of
`connecta-bench serve-synthetic --connectors 10 --tools 10` and one
keep-alive client with one MCP session making calls one at a time: each
call is `call_tool` of connector_3.lookup_record_4 (of a smaller
catalog, its nearest tool: `address_for`) with
`resultMode: "value"` ("direct"), or an `execute_code` program making that
one call ("program"). These are the figures docs/performance.md quotes as
instructions per call and as CPU per call by thread. "worker" counts a
sandbox worker's instructions per run of a one-call program instead,
driven over its frame protocol (`hot_functions.drive_worker`): WARM runs
and WARM + CALLS runs, the difference divided by CALLS, so the worker's
start is not counted.

instructions: the gateway runs under valgrind's callgrind; after WARM
  calls the counters are zeroed, CALLS more are made and the counters
  dumped. Prints instructions per call, `memcpy`'s share and the functions
  that ran the most instructions themselves. Callgrind counts each byte a
  `rep movsb` copies as an instruction: compare builds by these counts,
  not time.
threads: (10 × 10 unless --connectors / --tools say) each BINARY in turn,
  ROUNDS times (alternating, so that a busy minute of the machine falls
  on both): after WARM calls, CALLS more (`--kind program`: programs), and
  for each group of the gateway's threads (by name) the CPU time
  (`/proc/<pid>/task/*/schedstat`) and voluntary context switches per
  call, the sandbox workers' CPU (live ones and those the gateway reaped),
  the client's p50 and the gateway's anonymous RSS after.

Usage: python3 scripts/per_call.py instructions TARGET_DIR [direct|program|worker]
           [--calls N] [--warm N] [--top N] [--keep FILE]
       python3 scripts/per_call.py threads TARGET_DIR BINARY [BINARY ...]
           [--kind direct|program] [--calls N] [--warm N] [--rounds N]
           [--connectors C --tools T]
TARGET_DIR holds connecta-bench (and, for instructions, connecta). Run
through scripts/callgrind-call and scripts/thread-cpu, which build the
release binaries first. Needs python3, and valgrind (with
callgrind_control) for instructions.
"""

import argparse
import glob
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hot_functions import (PROGRAMS, callgrind_wrapper, drive_worker, self_costs,  # noqa: E402
                           synthetic_gateway, tail)

ADDRESS = "connector_3.lookup_record_4"
VERSION = "2025-06-18"


def address_for(connectors, tools):
    """`ADDRESS`, or the nearest tool a smaller synthetic catalog has."""
    return f"connector_{min(3, connectors - 1)}.lookup_record_{min(4, tools - 1)}"


def request_for(kind, address=ADDRESS):
    if kind == "direct":
        arguments = {"address": address, "args": {"value": 7}, "resultMode": "value"}
        name = "call_tool"
    else:
        arguments = {"code": f"const r = await connecta.call('{address}', {{value: 7}}); return r;"}
        name = "execute_code"
    return {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


class Session:
    """One MCP session over one kept-alive connection."""

    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
        self.h = {"content-type": "application/json",
                  "accept": "application/json, text/event-stream",
                  "mcp-protocol-version": VERSION}
        r, _ = self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "per-call", "version": "1"}}})
        if r.getheader("mcp-session-id"):
            self.h["mcp-session-id"] = r.getheader("mcp-session-id")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        # Headers and body in one write, as a client library sends them.
        self.c.request("POST", "/mcp", json.dumps(message).encode(), self.h)
        r = self.c.getresponse()
        body = r.read()
        if r.status not in (200, 202):
            raise RuntimeError(f"{message.get('method')}: HTTP {r.status}")
        return r, body

    def timed_calls(self, message, n):
        """Seconds each of `n` calls took."""
        took = []
        for _ in range(n):
            start = time.perf_counter()
            self.calls(message, 1)
            took.append(time.perf_counter() - start)
        return took

    def calls(self, message, n):
        for _ in range(n):
            _, body = self.post(message)
            if b'"isError":true' in body or b'"error"' in body[:64]:
                raise RuntimeError("the call failed: " + body[:300].decode(errors="replace"))


def instructions(args):
    binary = os.path.abspath(os.path.join(args.target_dir, "connecta"))
    if args.kind == "worker":
        return worker_instructions(args, binary)
    bench = os.path.abspath(os.path.join(args.target_dir, "connecta-bench"))
    with tempfile.TemporaryDirectory(prefix="per-call-") as work:
        out = os.path.join(work, "gateway.callgrind")
        log = os.path.join(work, "gateway.log")
        wrapper = callgrind_wrapper(work, binary, out, log, demangle=True)
        with synthetic_gateway(bench, wrapper, 10, 10, log) as ready:
            pid = str(ready["pid"])
            session = Session(ready["port"])
            message = request_for(args.kind)
            session.calls(message, args.warm)
            subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
            session.calls(message, args.calls)
            subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
            dumps = sorted(glob.glob(out + ".*"), key=os.path.getmtime)
            if not dumps:
                sys.exit("callgrind wrote no dump:\n" + tail(log))
            cost = self_costs(dumps[-1])
            if args.keep:
                shutil.copyfile(dumps[-1], args.keep)
    report(args, cost)


def worker_instructions(args, binary):
    """A worker's instructions per one-call program (`PROGRAMS[0]`)."""
    program = [PROGRAMS[0]]
    with tempfile.TemporaryDirectory(prefix="per-call-") as work:
        few = self_costs(drive_worker(binary, work, program, args.warm, demangle=True))
        many = drive_worker(binary, work, program, args.warm + args.calls, demangle=True)
        cost = self_costs(many)
        if args.keep:
            shutil.copyfile(many, args.keep)
    cost.subtract(few)
    report(args, +cost)


def report(args, cost):
    total = sum(cost.values())
    n = args.calls
    unit = "run" if args.kind == "worker" else "call"
    memcpy = sum(c for name, c in cost.items() if "memcpy" in name or "memmove" in name)
    print(f"{args.kind}: {total // n} instructions per {unit} over {n} {unit}s "
          f"(memcpy/memmove {memcpy // n}, {100 * memcpy / max(total, 1):.1f}%)")
    for name, c in cost.most_common(args.top):
        print(f"{c // n:8d} {100 * c / max(total, 1):5.2f}% {name[:140]}")


def by_thread(pid):
    """CPU ns and voluntary context switches of `pid`'s threads, by name."""
    use = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(os.path.join(task, "comm")) as f:
                name = f.read().strip()
            with open(os.path.join(task, "schedstat")) as f:
                ns = int(f.read().split()[0])
            with open(os.path.join(task, "status")) as f:
                switches = sum(int(line.split()[1]) for line in f
                               if line.startswith("voluntary_ctxt_switches"))
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
        was = use.get(name, (0, 0))
        use[name] = (was[0] + ns, was[1] + switches)
    return use


def workers_ns(pid):
    """CPU ns of `pid`'s child processes (its sandbox workers): the live
    ones' threads, and what the children it has reaped ran."""
    ticks = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # cutime and cstime, fields 16 and 17 (the list starts at field 3).
    ns = (int(fields[13]) + int(fields[14])) * 1_000_000_000 // ticks
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                              text=True).stdout.split()
    for child in children:
        for task in glob.glob(f"/proc/{child}/task/*"):
            try:
                with open(os.path.join(task, "schedstat")) as f:
                    ns += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # a worker that ended meanwhile
    return ns


def anon_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon:"))


def threads(args):
    bench = os.path.abspath(os.path.join(args.target_dir, "connecta-bench"))
    message = request_for(args.kind, address_for(args.connectors, args.tools))
    for round_ in range(args.rounds):
        for binary in args.binaries:
            with tempfile.TemporaryDirectory(prefix="per-call-") as work:
                log = os.path.join(work, "serve.log")
                with synthetic_gateway(bench, os.path.abspath(binary), args.connectors,
                                       args.tools, log) as ready:
                    pid = ready["pid"]
                    session = Session(ready["port"])
                    session.calls(message, args.warm)
                    before, workers_before = by_thread(pid), workers_ns(pid)
                    took = session.timed_calls(message, args.calls)
                    after, workers = by_thread(pid), workers_ns(pid) - workers_before
                    rss = anon_rss_kb(pid)
            n = args.calls
            groups = []
            total = 0
            for name in sorted(after):
                ns = after[name][0] - before.get(name, (0, 0))[0]
                switches = after[name][1] - before.get(name, (0, 0))[1]
                total += ns
                if ns or switches:
                    groups.append(f"{name} {ns / 1000 / n:.1f} µs {switches / n:.2f} sw")
            if workers:
                groups.append(f"sandbox workers {workers / 1000 / n:.1f} µs")
            took.sort()
            print(f"round {round_ + 1} {binary}: p50 {took[len(took) // 2] * 1e3:.3f} ms; "
                  f"gateway CPU {total / 1000 / n:.1f} µs per call ({'; '.join(groups)}); "
                  f"RssAnon {rss / 1024:.1f} MB", flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="measure", required=True)
    i = sub.add_parser("instructions")
    i.add_argument("target_dir")
    i.add_argument("kind", nargs="?", choices=["direct", "program", "worker"], default="direct")
    i.add_argument("--calls", type=int, default=1000)
    i.add_argument("--warm", type=int, default=300)
    i.add_argument("--top", type=int, default=25)
    i.add_argument("--keep", metavar="FILE",
                   help="copy callgrind's dump here (for callgrind_annotate)")
    t = sub.add_parser("threads")
    t.add_argument("target_dir")
    t.add_argument("binaries", nargs="+", metavar="BINARY")
    t.add_argument("--kind", choices=["direct", "program"], default="direct")
    t.add_argument("--calls", type=int, default=5000)
    t.add_argument("--warm", type=int, default=300)
    t.add_argument("--rounds", type=int, default=4)
    t.add_argument("--connectors", type=int, default=10)
    t.add_argument("--tools", type=int, default=10, help="per connector")
    args = p.parse_args()
    if args.measure == "threads" and (args.connectors < 1 or args.tools < 1):
        p.error("at least one connector of one tool")
    instructions(args) if args.measure == "instructions" else threads(args)


if __name__ == "__main__":
    main()
