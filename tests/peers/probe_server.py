"""A stdio MCP server that reports what it can reach on the machine, for the
tests that keep downstream children away from the gateway's memory and
files. Standard library only, so any user's `python3` runs it (a test run
as root starts the gateway, and so this child, as `nobody`).

    python3 probe_server.py

Tools (both annotated read-only):
- `probe {paths}`: tries to read each path (`{parent}` stands for the pid of
  the process that started this one: the gateway) and answers
  `{"parent": pid, "results": {path: {"read": text} | {"error": "EACCES"}}}`.
- `plant {path}`: tries to create a new file there; `{"read": "created"}` or
  `{"error": ...}`.
"""

import errno
import json
import os
import sys

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}

TOOLS = [
    {
        "name": "probe",
        "description": "Try to read each path; say what came back.",
        "inputSchema": {
            "type": "object",
            "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
            "required": ["paths"],
        },
        "annotations": READ_ONLY,
    },
    {
        "name": "plant",
        "description": "Try to create a new file at a path.",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        "annotations": READ_ONLY,
    },
]


def outcome(action):
    try:
        return {"read": action()}
    except OSError as e:
        return {"error": errno.errorcode.get(e.errno, str(e.errno))}


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("latin-1")


def create(path):
    with open(path, "x") as f:
        f.write("planted")
    return "created"


def call(name, args):
    if name == "probe":
        parent = str(os.getppid())
        results = {}
        for p in args["paths"]:
            p = p.replace("{parent}", parent)
            results[p] = outcome(lambda: read_text(p))
        return {"parent": int(parent), "results": results}
    if name == "plant":
        return outcome(lambda: create(args["path"]))
    raise KeyError(name)


def answer(msg):
    method = msg.get("method")
    if method == "initialize":
        return {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "probe", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        value = call(msg["params"]["name"], msg["params"].get("arguments") or {})
        return {
            "content": [{"type": "text", "text": json.dumps(value)}],
            "structuredContent": value,
            "isError": False,
        }
    return None


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue  # notifications and stray responses
    result = answer(msg)
    if result is None:
        reply = {"jsonrpc": "2.0", "id": msg["id"],
                 "error": {"code": -32601, "message": f"no method {msg['method']}"}}
    else:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
