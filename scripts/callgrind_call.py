"""Counts the instructions a gateway runs per call, with valgrind's
callgrind: the figures docs/performance.md quotes as "instructions per
direct call" ("The call's future kept small", "Bars not met").

A gateway of `connecta-bench serve-synthetic --connectors 10 --tools 10`
runs under callgrind. One keep-alive client opens an MCP session and makes
WARM calls, the counters are zeroed, it makes CALLS more one at a time,
and the counters are dumped: each call is `call_tool` of
connector_3.lookup_record_4 with `resultMode: "value"` ("direct"), or an
`execute_code` program making that one call ("program"). Prints the
instructions per call, `memcpy`'s share, and the functions that ran the
most instructions themselves. Callgrind counts each byte a `rep movsb`
copies as an instruction: compare builds by these counts, not time.

Usage: python3 scripts/callgrind_call.py TARGET_DIR [direct|program]
       [--calls N] [--warm N] [--top N] [--keep FILE]
Run through scripts/callgrind-call, which builds the release binaries
first. Needs valgrind (with callgrind_control) and python3.
"""

import argparse
import glob
import http.client
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hot_functions import self_costs, tail  # noqa: E402

ADDRESS = "connector_3.lookup_record_4"
VERSION = "2025-06-18"


def request_for(kind):
    if kind == "direct":
        arguments = {"address": ADDRESS, "args": {"value": 7}, "resultMode": "value"}
        name = "call_tool"
    else:
        arguments = {"code": f"const r = await connecta.call('{ADDRESS}', {{value: 7}}); return r;"}
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
            "clientInfo": {"name": "callgrind-call", "version": "1"}}})
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

    def calls(self, message, n):
        for _ in range(n):
            _, body = self.post(message)
            if b'"isError":true' in body or b'"error"' in body[:64]:
                raise RuntimeError("the call failed: " + body[:300].decode(errors="replace"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("target_dir")
    p.add_argument("kind", nargs="?", choices=["direct", "program"], default="direct")
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--warm", type=int, default=300)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--keep", metavar="FILE",
                   help="copy callgrind's dump here (for callgrind_annotate)")
    args = p.parse_args()
    binary = os.path.abspath(os.path.join(args.target_dir, "connecta"))
    bench = os.path.abspath(os.path.join(args.target_dir, "connecta-bench"))
    with tempfile.TemporaryDirectory(prefix="callgrind-call-") as work:
        out = os.path.join(work, "gateway.callgrind")
        log = os.path.join(work, "gateway.log")
        wrapper = os.path.join(work, "gateway-under-callgrind")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                   "--dump-line=no", binary]
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec " + shlex.join(command) + f' "$@" 2>>{shlex.quote(log)}\n')
        os.chmod(wrapper, 0o755)
        serve = subprocess.Popen([bench, "serve-synthetic", "--connectors", "10", "--tools", "10",
                                  "--connecta-bin", wrapper, "--ready-timeout", "900"],
                                 stdout=subprocess.PIPE, text=True)
        ready = None
        try:
            for line in serve.stdout:
                if '"port"' in line:
                    ready = json.loads(line)
                    break
            if ready is None:
                sys.exit("the gateway under valgrind did not start:\n" + tail(log))
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
        finally:
            if ready is not None:
                try:
                    os.kill(ready["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    pass
            serve.terminate()
            serve.wait()
    total = sum(cost.values())
    n = args.calls
    memcpy = sum(c for name, c in cost.items() if "memcpy" in name or "memmove" in name)
    print(f"{args.kind}: {total // n} instructions per call over {n} calls "
          f"(memcpy/memmove {memcpy // n}, {100 * memcpy / max(total, 1):.1f}%)")
    for name, c in cost.most_common(args.top):
        print(f"{c // n:8d} {100 * c / max(total, 1):5.2f}% {name[:140]}")


if __name__ == "__main__":
    main()
