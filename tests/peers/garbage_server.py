"""A deliberately broken stdio MCP server: it completes the handshake and
lists one read-only tool, then answers every tools/call with garbage.
Used to prove a broken downstream yields a typed error and nothing worse.
"""

import json
import sys

TOOL = {
    "name": "noise",
    "description": "Answers with garbage.",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method = msg.get("method")
    mid = msg.get("id")
    if method == "initialize":
        reply = {
            "jsonrpc": "2.0",
            "id": mid,
            "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "garbage", "version": "0"},
            },
        }
    elif method == "tools/list":
        reply = {"jsonrpc": "2.0", "id": mid, "result": {"tools": [TOOL]}}
    elif method == "tools/call":
        sys.stdout.write("this is not json at all {{{\n")
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"content": "not-a-list"}}) + "\n")
        sys.stdout.flush()
        continue
    elif mid is None:
        continue
    else:
        reply = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
