"""A downstream MCP server (official Python SDK, FastMCP) whose tool asks
its client for input in the middle of the call, over stdio or over
streamable HTTP with sessions and event-stream answers (the SDK's default).

    python py_elicit_server.py          (stdio)
    python py_elicit_server.py PORT     (streamable HTTP on 127.0.0.1:PORT)

`ask_name` elicits a name and fails when it gets none; `greet` does not ask.
`wait` sleeps until its client cancels it, and `cancellations` says how
many calls of `wait` were cancelled so far and how many are running.
Over HTTP, events are kept for resumption, and `drop_stream` closes its
call's event stream before it answers: the client must pick the answer
up with `Last-Event-ID`.
"""

import asyncio
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.types import ToolAnnotations
from pydantic import BaseModel

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)



class Events(EventStore):
    """Every event of every stream, in memory, numbered in order."""

    def __init__(self):
        self.events = []  # (event id, stream id, message or None)

    async def store_event(self, stream_id, message):
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        found = [e for e in self.events if e[0] == last_event_id]
        if not found:
            return None
        stream = found[0][1]
        for event_id, stream_id, message in self.events[int(last_event_id):]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
mcp = FastMCP("python-elicit-peer", host="127.0.0.1", port=port or 8000, event_store=Events())

counts = {"cancelled": 0, "running": 0}


class Name(BaseModel):
    name: str


@mcp.tool(annotations=READ_ONLY)
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name, then greet them."""
    answer = await ctx.elicit("What is your name?", schema=Name)
    if answer.action != "accept":
        raise ValueError(f"no name given ({answer.action})")
    return f"hello {answer.data.name}"


@mcp.tool(annotations=READ_ONLY)
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"hello {name}"


@mcp.tool(annotations=READ_ONLY)
async def wait(seconds: float = 3600) -> str:
    """Sleep until cancelled (or for the given time)."""
    counts["running"] += 1
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        counts["cancelled"] += 1
        raise
    finally:
        counts["running"] -= 1
    return "woke up"


@mcp.tool(annotations=READ_ONLY)
async def drop_stream(ctx: Context) -> str:
    """Close this call's event stream, then answer."""
    await ctx.close_sse_stream()
    await asyncio.sleep(0.2)
    return "answered after the stream closed"


@mcp.tool(annotations=READ_ONLY)
def cancellations() -> dict:
    """How many calls of `wait` were cancelled, and how many run now."""
    return dict(counts)


if __name__ == "__main__":
    mcp.run("streamable-http" if port else "stdio")
