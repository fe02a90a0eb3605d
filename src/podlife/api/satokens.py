"""Service account tokens: the JWTs the API server signs and checks (pkg/serviceaccount/jwt.go, claims.go).

One issuer per cluster, made on first use: an RSA 2048 key the server holds in memory only (kube-apiserver's
--service-account-signing-key-file; nothing is written to disk), so the tokens of one ``podlife up`` process
do not authenticate with the next. Tokens are RS256 with the key id upstream derives (keyIDFromPublicKey: the
SHA-256 of the DER public key, base64url); the issuer and the API audience are kubeadm's
(--service-account-issuer https://kubernetes.default.svc.cluster.local, --api-audiences defaulting to it).
Claims are read on the model's clock (the trace's start time plus the virtual time), as everything else.
"""

from __future__ import annotations

import base64
import weakref
from typing import Any

import orjson

from podlife.engine.sha256 import sha256

ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)
JWKS_PATH = "/openid/v1/jwks"
DISCOVERY_PATH = "/.well-known/openid-configuration"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _int_b64(n: int) -> str:
    return _b64(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class TokenError(Exception):
    """A token that does not authenticate; the text is upstream's."""


_VERIFIED_KEPT = 4096


class Issuer:
    def __init__(self) -> None:
        # imported here: podlife run, which signs nothing, does not load OpenSSL
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        der = self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
        self.kid = _b64(sha256(der).digest())   # jwt.go keyIDFromPublicKey
        # tokens whose signature checked out (an RSA verification is about 0.1 ms, more than the rest of a request's
        # authentication): the same bytes under the same key verify the same way, so each is checked once
        self._verified: dict[str, None] = {}

    def sign(self, claims: dict[str, Any]) -> str:
        """jwt.go GenerateToken: go-jose serializes the merged claims as a map, so keys come sorted."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        head = _b64(orjson.dumps({"alg": "RS256", "kid": self.kid}))
        body = _b64(orjson.dumps({"iss": ISSUER, **claims}, option=orjson.OPT_SORT_KEYS))
        sig = self.key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{head}.{body}.{_b64(sig)}"

    def verify(self, token: str) -> dict[str, Any]:
        """The signature and issuer of one of this issuer's tokens (jwt.go AuthenticateToken); the caller checks
        times, audiences and the bound objects."""
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        parts = token.split(".")
        if len(parts) != 3:
            raise TokenError("invalid bearer token")
        try:
            head, claims, sig = orjson.loads(_unb64(parts[0])), orjson.loads(_unb64(parts[1])), _unb64(parts[2])
        except (ValueError, orjson.JSONDecodeError):
            raise TokenError("invalid bearer token") from None
        if not isinstance(claims, dict) or claims.get("iss") != ISSUER or not isinstance(head, dict):
            raise TokenError("invalid bearer token")
        if head.get("alg") != "RS256" or head.get("kid") != self.kid:
            raise TokenError("invalid bearer token, square/go-jose: error in cryptographic primitive")
        if token not in self._verified:
            try:
                self.key.public_key().verify(sig, f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(),
                                             hashes.SHA256())
            except InvalidSignature:
                raise TokenError("invalid bearer token, square/go-jose: error in cryptographic primitive") from None
            if len(self._verified) >= _VERIFIED_KEPT:
                del self._verified[next(iter(self._verified))]   # the oldest
            self._verified[token] = None
        return claims

    def jwks(self) -> dict[str, Any]:
        """pkg/serviceaccount/openidmetadata.go: the public keys as a JSON Web Key Set."""
        pub = self.key.public_key().public_numbers()
        return {"keys": [{"use": "sig", "kty": "RSA", "kid": self.kid, "alg": "RS256",
                          "n": _int_b64(pub.n), "e": _int_b64(pub.e)}]}

    @staticmethod
    def openid_configuration(jwks_uri: str) -> dict[str, Any]:
        """openidmetadata.go openIDMetadata (--service-account-jwks-uri unset: the issuer's host and
        JWKS_PATH)."""
        return {"issuer": ISSUER, "jwks_uri": jwks_uri, "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"]}


_ISSUERS: weakref.WeakKeyDictionary[Any, Issuer] = weakref.WeakKeyDictionary()


def issuer_of(store: Any) -> Issuer:
    """The cluster's issuer (one per kernel, made on first use: ``podlife run`` never signs a token)."""
    got = _ISSUERS.get(store.kernel)
    if got is None:
        got = _ISSUERS[store.kernel] = Issuer()
    return got


def has_issuer(store: Any) -> bool:
    """Whether the cluster's issuer exists yet: before it does, no token can be one of its own (and a stray
    token does not make a key)."""
    return store.kernel in _ISSUERS
