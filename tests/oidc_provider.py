"""A test OpenID Connect identity provider on 127.0.0.1 (port 0): authorization endpoint (it
signs `person` in at once and redirects back with a code), token endpoint (checks the client's
secret, the code, its redirect URI and PKCE verifier; returns an RS256 id_token signed with a
key made here by `cryptography`), JWKS and userinfo endpoints. No discovery document.

    with IdentityProvider() as idp:
        idp.person = {"sub": "u1", "email": "a@example.org", "email_verified": True}
"""

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

CLIENT_ID = "evalsite-test"
CLIENT_SECRET = "test-client-secret"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _int(n: int) -> str:
    return _b64(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class IdentityProvider:
    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.person = {"sub": "sub-1", "email": "ann@example.org", "email_verified": True}
        self.auth_age = 0  # seconds between the sign-in at the provider and the id_token
        self.authorize_requests: list[dict] = []
        self.codes: dict[str, dict] = {}
        self.tokens: dict[str, dict] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/authorize":
                    self._redirect(outer.authorize(query))
                elif parts.path == "/jwks":
                    self._json(200, outer.jwks())
                elif parts.path == "/userinfo":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    claims = outer.tokens.get(token)
                    self._json(200 if claims else 401, claims or {"error": "invalid_token"})
                else:
                    self._json(404, {})

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                form = {k: v[0] for k, v in parse_qs(body).items()}
                status, document = outer.token(form)
                self._json(status, document)

            def _redirect(self, location):
                self.send_response(302)
                self.send_header("Location", location)
                self.end_headers()

            def _json(self, status, document):
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def settings(self) -> dict:
        """The relying party's settings for this provider (as an operator's .env sets them)."""
        return {
            "SSO_ENABLED": True,
            "OIDC_RP_CLIENT_ID": CLIENT_ID,
            "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.url}/authorize",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.url}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.url}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.url}/jwks",
        }

    def authorize(self, query: dict) -> str:
        self.authorize_requests.append(query)
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        return f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}"

    def token(self, form: dict) -> tuple[int, dict]:
        asked = self.codes.pop(form.get("code", ""), None)
        if (
            asked is None
            or form.get("client_id") != CLIENT_ID
            or form.get("client_secret") != CLIENT_SECRET
            or form.get("redirect_uri") != asked["redirect_uri"]
        ):
            return 400, {"error": "invalid_grant"}
        verifier = form.get("code_verifier", "")
        if _b64(hashlib.sha256(verifier.encode()).digest()) != asked.get("code_challenge"):
            return 400, {"error": "invalid_grant", "error_description": "PKCE"}
        access = secrets.token_urlsafe(16)
        self.tokens[access] = dict(self.person)
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": self.id_token(asked.get("nonce")),
        }

    def id_token(self, nonce: str | None) -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "auth_time": now - self.auth_age,
            **({"nonce": nonce} if nonce else {}),
            **self.person,
        }
        header = {"alg": "RS256", "typ": "JWT", "kid": "k1"}
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{_b64(signature)}"

    def jwks(self) -> dict:
        numbers = self.key.public_key().public_numbers()
        return {
            "keys": [
                {"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
                 "n": _int(numbers.n), "e": _int(numbers.e)}
            ]
        }  # fmt: skip
