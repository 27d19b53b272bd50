"""An HTTP server that refuses every request: with 401 and a Bearer
challenge (a downstream whose credentials are missing or rejected), or, with
--echo, with 400 and an HTML page that quotes the request's Authorization
header back (a careless proxy in front of a downstream).

    python http_401_server.py PORT [--echo]
"""

import http.server
import sys

ECHO = "--echo" in sys.argv[2:]


class Refuse(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if ECHO:
            body = f"<html><body>bad request; auth={self.headers.get('Authorization')}</body></html>".encode()
            self.send_response(400)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="downstream"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST
    do_DELETE = do_POST

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Refuse).serve_forever()
