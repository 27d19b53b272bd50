"""A minimal stateless MCP server over streamable HTTP (JSON responses) whose
misbehaviour is scripted, for the failure paths a well-behaved SDK server
never takes: a paginated tool list with a broken page, and a rate-limited
tool that answers HTTP 429/503 with a `Retry-After` header.

    python scripted_http_server.py PORT [--pages N] [--per-page K]
        [--broken-page P] [--limited-failures F] [--limited-status S]
        [--retry-after SECONDS]

Tools: `page<p>_tool<k>` (read-only, returns its own name) for every page,
`limited` (read-only; fails F times with HTTP S and `Retry-After`, then
answers) and `attempts` (read-only; the monotonic times in milliseconds at
which `limited` was attempted).
"""

import argparse
import http.server
import json
import time

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--pages", type=int, default=1)
parser.add_argument("--per-page", type=int, default=3)
parser.add_argument("--broken-page", type=int, default=0)
parser.add_argument("--limited-failures", type=int, default=0)
parser.add_argument("--limited-status", type=int, default=429)
parser.add_argument("--retry-after", default="1")
opts = parser.parse_args()

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}
attempt_times = []


def page_tools(page):
    return [
        {
            "name": f"page{page}_tool{k}",
            "description": f"Return the name of tool {k} on page {page}.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": READ_ONLY,
        }
        for k in range(1, opts.per_page + 1)
    ]


def extra_tools():
    return [
        {
            "name": "limited",
            "description": "A rate limited lookup.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": READ_ONLY,
        },
        {
            "name": "attempts",
            "description": "When the rate limited lookup was attempted.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": READ_ONLY,
        },
    ]


def text_result(value):
    return {
        "content": [{"type": "text", "text": json.dumps(value)}],
        "structuredContent": {"value": value},
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(405)

    do_DELETE = do_GET

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(length) or b"{}")
        if "id" not in msg:
            self.reply(202)
            return
        method, params, rid = msg.get("method"), msg.get("params") or {}, msg["id"]

        def ok(result):
            self.reply(200, {"jsonrpc": "2.0", "id": rid, "result": result})

        if method == "initialize":
            ok(
                {
                    "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1.0.0"},
                }
            )
        elif method == "tools/list":
            page = int(params.get("cursor") or "1")
            if page == opts.broken_page:
                self.reply(
                    200,
                    {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "error": {"code": -32603, "message": "page store offline"},
                    },
                )
                return
            tools = page_tools(page)
            result = {"tools": tools}
            if page < opts.pages:
                result["nextCursor"] = str(page + 1)
            else:
                tools.extend(extra_tools())
            ok(result)
        elif method == "tools/call":
            name = params.get("name", "")
            if name == "limited":
                attempt_times.append(round(time.monotonic() * 1000))
                if len(attempt_times) <= opts.limited_failures:
                    self.reply(
                        opts.limited_status,
                        None,
                        [("Retry-After", opts.retry_after)],
                    )
                    return
                ok(text_result(f"answered after {len(attempt_times)} attempts"))
            elif name == "attempts":
                ok(text_result(attempt_times))
            else:
                ok(text_result(name))
        elif method == "ping":
            ok({})
        else:
            self.reply(
                200,
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32601, "message": f"no method {method}"},
                },
            )

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", opts.port), Handler).serve_forever()
