"""Drive a connecta gateway with the official Python SDK client (mcp 1.x).

    python py_client.py http URL
    python py_client.py stdio CONNECTA_BIN CONFIG

Exits 0 and prints "OK" when every check passes; prints the failing check
and exits 1 otherwise. The checks: list the tools, search, call a read-only
tool, be refused a destructive one with destructive_tool_requires_approval,
and call it through call_destructive_tool.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

EXPECTED = {"execute_code", "search_tools", "call_tool", "call_destructive_tool", "authorize_connector", "get_result", "skills"}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def structured(result):
    if result.structuredContent is not None:
        return result.structuredContent
    return json.loads(result.content[0].text)


async def exercise(session):
    init = await session.initialize()
    check(init.serverInfo.name == "connecta", f"server name {init.serverInfo.name}")
    check(init.instructions and len(init.instructions.encode()) <= 1000, "instructions present and <= 1000 bytes")
    tools = await session.list_tools()
    names = {t.name for t in tools.tools}
    check(names == EXPECTED, f"tool names {sorted(names)}")

    found = structured(await session.call_tool("search_tools", {"query": "get note"}))
    addresses = [t["address"] for t in found["tools"]]
    check("demo.get_note" in addresses, f"search found {addresses}")

    note = await session.call_tool("call_tool", {"address": "demo.get_note", "args": {"id": 2}})
    check(not note.isError, f"read-only call failed: {note.content}")
    check(structured(note)["title"] == "Release checklist", f"note {structured(note)}")

    refused = await session.call_tool("call_tool", {"address": "demo.delete_note", "args": {"id": 3}})
    check(refused.isError, "destructive tool was not refused by call_tool")
    err = structured(refused)["error"]
    check(err["code"] == "destructive_tool_requires_approval", f"refusal code {err}")
    check(err["nextAction"]["tool"] == "call_destructive_tool", f"nextAction {err}")

    done = await session.call_tool(
        "call_destructive_tool",
        {"address": "demo.delete_note", "args": {"id": 3}, "reason": "cleaning up a test note"},
    )
    check(not done.isError, f"destructive call failed: {done.content}")
    check(structured(done)["deleted"] is True, f"delete result {structured(done)}")
    print("OK")


async def main():
    mode = sys.argv[1]
    if mode == "http":
        async with streamablehttp_client(sys.argv[2]) as (read, write, _):
            async with ClientSession(read, write) as session:
                await exercise(session)
    else:
        params = StdioServerParameters(command=sys.argv[2], args=["serve", "--stdio", "--config", sys.argv[3]])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session)


asyncio.run(main())
