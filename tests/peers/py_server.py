"""A downstream MCP server written with the official Python SDK (FastMCP,
mcp 1.x). The connecta tests front it over stdio and over streamable HTTP.

    python py_server.py stdio
    python py_server.py http PORT

Over HTTP, REQUIRE_AUTHORIZATION=<exact header value> makes every request
without that Authorization header fail with 401 (a downstream that needs a
credential the gateway supplies from its vault).
"""

import asyncio
import hmac
import os
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)

port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
mcp = FastMCP("python-peer", host="127.0.0.1", port=port or 8000, stateless_http=True, json_response=True)

CITIES = {
    "lisbon": {"city": "Lisbon", "tempC": 21, "sky": "clear"},
    "oslo": {"city": "Oslo", "tempC": 4, "sky": "snow"},
    "lima": {"city": "Lima", "tempC": 18, "sky": "overcast"},
}


@mcp.tool(annotations=READ_ONLY)
def weather_lookup(city: str) -> dict:
    """Current weather for a city."""
    found = CITIES.get(city.lower())
    if found is None:
        raise ValueError(f"unknown city {city}")
    return found


@mcp.tool(annotations=READ_ONLY)
def big_text(kilobytes: int) -> str:
    """Return a long multilingual text of about the given size (for paging tests)."""
    unit = "connecta é ótimo — 日本語テキスト 😀 "
    out = []
    size = 0
    while size < kilobytes * 1024:
        out.append(unit)
        size += len(unit.encode())
    return "".join(out)


@mcp.tool(annotations=READ_ONLY)
async def hang(seconds: float = 3600) -> str:
    """Sleep for a long time (for timeout tests)."""
    await asyncio.sleep(seconds)
    return "woke up"


@mcp.tool(annotations=READ_ONLY)
def crash() -> str:
    """Exit the process at once (for supervision tests)."""
    os._exit(3)


@mcp.tool(annotations=READ_ONLY)
def pid() -> dict:
    """This process's id."""
    return {"pid": os.getpid()}


@mcp.tool(name="lookup-record", annotations=READ_ONLY)
def lookup_record_dash(id: int) -> dict:
    """Look up a record (dash-named twin, for shortcut ambiguity tests)."""
    return {"id": id, "via": "lookup-record"}


@mcp.tool(name="lookup_record", annotations=READ_ONLY)
def lookup_record_snake(id: int) -> dict:
    """Look up a record (snake-named twin, for shortcut ambiguity tests)."""
    return {"id": id, "via": "lookup_record"}


@mcp.tool(name="get-item", annotations=READ_ONLY)
def get_item_dash() -> dict:
    """Get the item (one of two tools whose shortcut name is get_item)."""
    return {"via": "get-item"}


@mcp.tool(name="get.item", annotations=READ_ONLY)
def get_item_dot() -> dict:
    """Get the item (the other tool whose shortcut name is get_item)."""
    return {"via": "get.item"}


@mcp.tool(annotations=READ_ONLY)
def flaky() -> str:
    """Always fails with a tool error."""
    raise RuntimeError("the flaky tool failed on purpose")


@mcp.tool(annotations=READ_ONLY)
def echo_authorization(ctx: Context) -> dict:
    """Echo the Authorization header this request came with (a careless
    downstream that hands its caller's credential back)."""
    request = ctx.request_context.request
    header = request.headers.get("authorization") if request is not None else None
    return {"authorization": header}


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def forget_city(city: str) -> dict:
    """Remove a city from the table."""
    return {"removed": CITIES.pop(city.lower(), None) is not None}


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run(transport="stdio")
    elif os.environ.get("REQUIRE_AUTHORIZATION") is None:
        mcp.run(transport="streamable-http")
    else:
        import uvicorn

        required = os.environ["REQUIRE_AUTHORIZATION"].encode("latin-1")
        app = mcp.streamable_http_app()

        async def guarded(scope, receive, send):
            if scope["type"] == "http":
                got = dict(scope["headers"]).get(b"authorization", b"")
                if not hmac.compare_digest(got, required):
                    await send({
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"www-authenticate", b'Bearer realm="py"'), (b"content-length", b"0")],
                    })
                    await send({"type": "http.response.body", "body": b""})
                    return
            await app(scope, receive, send)

        uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")
