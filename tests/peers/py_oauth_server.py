"""An MCP server that is its own OAuth 2.1 authorization server, built on the
official Python SDK's auth support (FastMCP + OAuthAuthorizationServerProvider):
RFC 9728 protected-resource metadata, RFC 8414 server metadata, dynamic client
registration, PKCE, refresh tokens. /mcp refuses requests without a token it
issued.

The provider consents at once (a human's "Allow" is the GET of the consent
URL), so tests can play the person with one HTTP request. Access tokens live
TOKEN_SECONDS (argv[2], default 3600) so tests can watch a refresh.

    python py_oauth_server.py PORT [TOKEN_SECONDS]

POST /preregister adds a client registered by hand. POST
/drop-access-tokens forgets the access tokens issued (not the refresh
tokens). POST /refresh-fails {on} makes every refresh fail with HTTP 500
while on (the token store is "down"), without spending the refresh token.
POST /refresh-delay {seconds} makes a refresh spend its refresh token at
once and answer only after that long (a slow token endpoint, so two
replicas can race with one refresh token). GET /stats answers counts
(registrations, authorizations, code exchanges, refreshes refused as spent,
refreshes), the resource the last token was issued for, and the last tokens
issued (so a test can check they appear nowhere they must not).
"""

import asyncio
import secrets
import sys
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations
from starlette.requests import Request
from starlette.responses import JSONResponse

PORT = int(sys.argv[1])
TOKEN_SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
BASE = f"http://127.0.0.1:{PORT}"

REFRESH_FAILS = {"on": False}
REFRESH_DELAY = {"seconds": 0.0}

STATS = {
    "registrations": 0,
    "authorizations": 0,
    "exchanges": 0,
    "refreshes": 0,
    "resource": None,
    "failed_refreshes": 0,
    # Refreshes refused because their refresh token was spent (or unknown).
    "spent_refreshes": 0,
    # So a test can look for the token where it must never be.
    "last_access_token": None,
    "last_refresh_token": None,
}


class AutoConsentProvider:
    def __init__(self):
        self.clients = {}
        self.codes = {}
        self.refresh = {}
        self.access = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        STATS["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        STATS["authorizations"] += 1
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["notes"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="user-ada",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _issue(self, client_id, scopes, resource):
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + TOKEN_SECONDS,
            resource=resource,
            subject="user-ada",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="user-ada"
        )
        STATS["resource"] = resource
        STATS["last_access_token"] = access
        STATS["last_refresh_token"] = refresh
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=TOKEN_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(self, client, authorization_code):
        STATS["exchanges"] += 1
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        found = self.refresh.get(refresh_token)
        if found is None:
            STATS["spent_refreshes"] += 1
        return found

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        if REFRESH_FAILS["on"]:
            STATS["failed_refreshes"] += 1
            raise RuntimeError("the token store is down")
        STATS["refreshes"] += 1
        # Rotated: the old refresh token is spent, before a slow answer.
        self.refresh.pop(refresh_token.token, None)
        issued = self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)
        if REFRESH_DELAY["seconds"] > 0:
            await asyncio.sleep(REFRESH_DELAY["seconds"])
        return issued

    async def load_access_token(self, token):
        t = self.access.get(token)
        if t is None or (t.expires_at is not None and t.expires_at < time.time()):
            return None
        return t

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", None), None)
        self.refresh.pop(getattr(token, "token", None), None)


PROVIDER = AutoConsentProvider()

mcp = FastMCP(
    "oauth-notes",
    host="127.0.0.1",
    port=PORT,
    auth_server_provider=PROVIDER,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,
        client_registration_options=ClientRegistrationOptions(
            # "other" is grantable but opens nothing: a token with only it
            # is accepted and then refused with 403 (insufficient_scope).
            enabled=True, valid_scopes=["notes", "other"], default_scopes=["notes"]
        ),
        required_scopes=["notes"],
    ),
    stateless_http=True,
    json_response=True,
)


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def whoami(ctx: Context) -> dict:
    """Who the bearer token was issued to."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    t = get_access_token()
    return {"subject": t.subject if t else None, "client": t.client_id if t else None}


@mcp.custom_route("/drop-access-tokens", methods=["POST"])
async def drop_access_tokens(request: Request):
    """Forget every access token (refresh tokens stay good): the next call
    with an old token is refused with 401."""
    dropped = len(PROVIDER.access)
    PROVIDER.access.clear()
    return JSONResponse({"dropped": dropped})


@mcp.custom_route("/refresh-fails", methods=["POST"])
async def refresh_fails(request: Request):
    REFRESH_FAILS["on"] = bool((await request.json())["on"])
    return JSONResponse(REFRESH_FAILS)


@mcp.custom_route("/refresh-delay", methods=["POST"])
async def refresh_delay(request: Request):
    REFRESH_DELAY["seconds"] = float((await request.json())["seconds"])
    return JSONResponse(REFRESH_DELAY)


@mcp.custom_route("/preregister", methods=["POST"])
async def preregister(request: Request):
    """Register a confidential client by hand, as an operator would in a
    provider's console: body {client_id, client_secret, redirect_uri,
    auth_method}."""
    body = await request.json()
    PROVIDER.clients[body["client_id"]] = OAuthClientInformationFull(
        client_id=body["client_id"],
        client_secret=body["client_secret"],
        redirect_uris=[body["redirect_uri"]],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=body.get("auth_method", "client_secret_basic"),
        scope="notes",
    )
    return JSONResponse({"ok": True})


@mcp.custom_route("/stats", methods=["GET"])
async def stats(request: Request):
    return JSONResponse(STATS)


if __name__ == "__main__":
    mcp.run(transport="streamable-http")
