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
"""

import http.server
import json
import sys

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
            self.send_json(200, {"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks.json",
                                 "token_endpoint": f"{ISSUER}/token"})
        elif self.path == "/jwks.json":
            fetches += 1
            if jwks_down:
                self.send_json(503, {"error": "temporarily_unavailable"})
            else:
                self.send_json(200, JWKS)
        elif self.path == "/jwks-fetches":
            self.send_json(200, {"fetches": fetches})
        else:
            self.send_json(404, {"error": "not_found"})

    def do_POST(self):
        global jwks_down
        if self.path == "/jwks-down":
            req = json.loads(self.rfile.read(int(self.headers["content-length"])))
            jwks_down = bool(req["down"])
            self.send_json(200, {"down": jwks_down})
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
