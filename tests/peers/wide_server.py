"""A stdio MCP server with a wide catalog, for the discovery tests.

    python3 wide_server.py N

Lists N read-only `quarterly_report_<i>` tools whose input schemas carry forty
described properties (about 4 KB of JSON Schema each, so a page of a hundred
exact schemas passes the 256,000-byte ceiling), plus four tools whose
annotations are missing, contradictory, a plain write, or left to an operator
override. Every call answers "ok". Plain JSON-RPC on stdin/stdout, so it needs
nothing but the standard library.
"""

import json
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 120


def report(i):
    props = {
        f"field_{k:02}": {
            "type": "string",
            "description": f"Column {k} of the quarterly report; free text up to a line long.",
        }
        for k in range(40)
    }
    return {
        "name": f"quarterly_report_{i}",
        "description": f"Fetch quarterly report {i} for one sales region.",
        "inputSchema": {"type": "object", "properties": props, "required": ["field_00"]},
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    }


TOOLS = [report(i) for i in range(N)] + [
    {
        "name": "odd_unannotated",
        "description": "Archive a ledger; annotations missing.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "odd_contradictory",
        "description": "Archive a ledger; read-only and destructive at once.",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True, "destructiveHint": True},
    },
    {
        "name": "odd_write",
        "description": "Archive a ledger; a plain write.",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": False},
    },
    {
        "name": "odd_overridden",
        "description": "Archive a ledger; the operator declares it read-only.",
        "inputSchema": {"type": "object"},
    },
]

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method = msg.get("method")
    mid = msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "wide", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ok"}]}
    elif method == "ping":
        result = {}
    else:
        reply = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()
