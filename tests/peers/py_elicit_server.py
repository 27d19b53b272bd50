"""A downstream MCP server (official Python SDK, FastMCP) whose tool asks
its client for input in the middle of the call, over stdio.

    python py_elicit_server.py

`ask_name` elicits a name and fails when it gets none; `greet` does not ask.
"""

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations
from pydantic import BaseModel

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)

mcp = FastMCP("python-elicit-peer")


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


mcp.run("stdio")
