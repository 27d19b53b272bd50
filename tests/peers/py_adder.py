"""A tiny downstream MCP server written with the official Python SDK
(FastMCP, mcp 1.x) over stdio, with one read-only tool, `add`: "Add two
integers." The search tests put it beside server-everything's `get-sum`.

    python py_adder.py
"""

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("python-adder")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mcp.run("stdio")
