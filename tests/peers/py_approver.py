"""A Python SDK client (mcp 1.x) over stdio whose human answers approval
questions by elicitation, for the `ask` policy.

    python py_approver.py CONNECTA_BIN CONFIG

It calls `call_destructive_tool` twice on the demo connector: the first
question is accepted with approve=true, the second is declined. It checks
that the question named the tool and carried the agent's reason and the
arguments, that the first call ran and the second was refused with
`approval_rejected`. Prints "OK" or the failing check.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

asked = []


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def structured(result):
    if result.structuredContent is not None:
        return result.structuredContent
    return json.loads(result.content[0].text)


async def on_elicit(context, params):
    asked.append(params.message)
    schema = params.requestedSchema
    check(schema["properties"]["approve"]["type"] == "boolean", f"schema {schema}")
    if len(asked) == 1:
        return types.ElicitResult(action="accept", content={"approve": True})
    return types.ElicitResult(action="decline")


async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["serve", "--stdio", "--config", sys.argv[2]])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            await session.initialize()
            done = await session.call_tool(
                "call_destructive_tool",
                {"address": "demo.delete_note", "args": {"id": 1}, "reason": "remove the stale grocery list"},
            )
            check(not done.isError, f"approved call failed: {done.content}")
            check(structured(done)["deleted"] is True, f"delete result {structured(done)}")
            check(len(asked) == 1, f"questions asked: {asked}")
            check("demo.delete_note" in asked[0], f"question {asked[0]!r}")
            check("remove the stale grocery list" in asked[0], f"question without the reason: {asked[0]!r}")
            check('"id":1' in asked[0], f"question without the arguments: {asked[0]!r}")

            refused = await session.call_tool(
                "call_destructive_tool", {"address": "demo.delete_note", "args": {"id": 2}}
            )
            check(refused.isError, "a declined call ran")
            err = structured(refused)["error"]
            check(err["code"] == "approval_rejected", f"refusal {err}")
            check("elicitation" in err["message"], f"refusal does not say who decided: {err}")
            check(len(asked) == 2, f"questions asked: {asked}")

            kept = await session.call_tool("call_tool", {"address": "demo.get_note", "args": {"id": 2}})
            check(not kept.isError, f"the declined delete ran anyway: {kept.content}")
    print("OK")


asyncio.run(main())
