"""Drive a connecta gateway with the current Python SDK's high-level Client
(mcp 2.x), which probes server/discover (2026-07-28) before anything else.

    python py_client_modern.py URL
"""

import asyncio
import json
import sys
import time

from mcp import Client


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


async def main():
    started = time.monotonic()
    async with Client(sys.argv[1]) as client:
        connected = time.monotonic() - started
        # A silent discover probe would cost the client a multi-second wait.
        check(connected < 5, f"connecting took {connected:.1f}s")
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        check("search_tools" in names and "call_tool" in names, f"tools {names}")
        result = await client.call_tool("call_tool", {"address": "demo.note_stats"})
        check(not result.is_error, f"call failed: {result}")
        value = result.structured_content or json.loads(result.content[0].text)
        check(value["notes"] >= 1, f"stats {value}")
        print(f"OK protocol={getattr(client, 'protocol_version', '?')}")


asyncio.run(main())
