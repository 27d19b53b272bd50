"""An HTTP server that refuses every request with 401 and a Bearer
challenge: a downstream whose credentials are missing or rejected.

    python http_401_server.py PORT
"""

import http.server
import sys


class Refuse(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="downstream"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST
    do_DELETE = do_POST

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Refuse).serve_forever()
