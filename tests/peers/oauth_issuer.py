"""A small OAuth authorization server for tests, built on PyJWT and
cryptography (an implementation independent of connecta's).

    python oauth_issuer.py PORT

It generates an RSA and an EC signing key at start and serves:
- GET /.well-known/oauth-authorization-server  (RFC 8414 metadata)
- GET /jwks.json                               (both public keys)
- GET /jwks-fetches                            (how many times the JWKS was fetched)
- POST /jwks-down {down}                       (while down, /jwks.json answers 503;
  a fetch is counted all the same)
- POST /mint  {claims, alg?, kid?, key?}       -> {"token": "..."}
  `key` "rsa" (default), "ec", or "stranger" (a key not in the JWKS, same kid
  as the RSA one, to forge a signature). Claims are used as given.
- POST /jwks-hold {hold}                       (while on, /jwks.json answers
  only when it is turned off again)
- GET /jwks-held                               (how many /jwks.json requests
  are held now with their client still connected)
- POST /jwks-oversize {bytes}                  (/jwks.json streams that many
  bytes, chunked, without a length; 0 turns it off)
- GET /jwks-oversize                           ({"done", "sent"}: whether the
  last oversize answer ended, and how many bytes the client took)
- POST /issuer-claim {issuer}                  (the metadata names this
  issuer instead of its own; null restores it)
"""

import http.server
import json
import select
import socket
import sys
import threading

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

PORT = int(sys.argv[1])
ISSUER = f"http://127.0.0.1:{PORT}"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
STRANGER = rsa.generate_private_key(public_exponent=65537, key_size=2048)

fetches = 0
jwks_down = False
claimed_issuer = None
release = threading.Event()
release.set()
held = []  # the sockets of held /jwks.json requests
held_lock = threading.Lock()
oversize = {"bytes": 0, "done": True, "sent": 0}


def still_connected(sock):
    """The client has not closed its end (nothing readable, or data)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return True
        return sock.recv(1, socket.MSG_PEEK) != b""
    except OSError:
        return False


def public_jwk(key, kid, alg, algorithm):
    jwk = json.loads(algorithm.to_jwk(key.public_key()))
    jwk.update({"kid": kid, "alg": alg, "use": "sig"})
    return jwk


JWKS = {
    "keys": [
        public_jwk(RSA_KEY, "rsa-1", "RS256", RSAAlgorithm),
        public_jwk(EC_KEY, "ec-1", "ES256", ECAlgorithm),
    ]
}


class Issuer(http.server.BaseHTTPRequestHandler):
    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        global fetches
        if self.path == "/.well-known/oauth-authorization-server":
            self.send_json(200, {"issuer": claimed_issuer or ISSUER,
                                 "jwks_uri": f"{ISSUER}/jwks.json",
                                 "token_endpoint": f"{ISSUER}/token"})
        elif self.path == "/jwks.json":
            fetches += 1
            if not release.is_set():
                with held_lock:
                    held.append(self.connection)
                release.wait()
                with held_lock:
                    held.remove(self.connection)
            if oversize["bytes"]:
                self.stream_oversize(oversize["bytes"])
            elif jwks_down:
                self.send_json(503, {"error": "temporarily_unavailable"})
            else:
                self.send_json(200, JWKS)
        elif self.path == "/jwks-fetches":
            self.send_json(200, {"fetches": fetches})
        elif self.path == "/jwks-held":
            with held_lock:
                n = sum(1 for c in held if still_connected(c))
            self.send_json(200, {"held": n})
        elif self.path == "/jwks-oversize":
            self.send_json(200, {"done": oversize["done"], "sent": oversize["sent"]})
        else:
            self.send_json(404, {"error": "not_found"})

    def stream_oversize(self, total):
        """A JWKS-looking body of `total` bytes, chunked, no length given."""
        oversize.update(done=False, sent=0)
        self.protocol_version = "HTTP/1.1"  # chunked needs 1.1
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        piece = b" " * 65536
        try:
            self.wfile.write(b'6\r\n{"keys\r\n')
            while oversize["sent"] < total:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                oversize["sent"] += len(piece)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass
        finally:
            oversize["done"] = True
            self.close_connection = True

    def do_POST(self):
        global jwks_down, claimed_issuer
        if self.path in ("/jwks-down", "/jwks-hold", "/jwks-oversize", "/issuer-claim"):
            req = json.loads(self.rfile.read(int(self.headers["content-length"])))
            if self.path == "/jwks-down":
                jwks_down = bool(req["down"])
            elif self.path == "/jwks-hold":
                (release.clear if req["hold"] else release.set)()
            elif self.path == "/jwks-oversize":
                oversize["bytes"] = int(req["bytes"])
            else:
                claimed_issuer = req["issuer"]
            self.send_json(200, req)
            return
        if self.path != "/mint":
            self.send_json(404, {"error": "not_found"})
            return
        req = json.loads(self.rfile.read(int(self.headers["content-length"])))
        which = req.get("key", "rsa")
        key = {"rsa": RSA_KEY, "ec": EC_KEY, "stranger": STRANGER}[which]
        alg = req.get("alg", "ES256" if which == "ec" else "RS256")
        kid = req.get("kid", "ec-1" if which == "ec" else "rsa-1")
        token = jwt.encode(req["claims"], key, algorithm=alg, headers={"kid": kid})
        self.send_json(200, {"token": token})

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Issuer).serve_forever()
