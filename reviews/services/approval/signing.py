"""The site's Ed25519 approval key: sign canonical ground truth, verify it anywhere.

The private key comes from `SIGNING_KEY_PATH` (PEM, PKCS#8); the first approval creates it
there with mode 0600 if it is missing. The key id is the SHA-256 fingerprint of the raw public
key (first 16 hex digits), so anyone holding the public key can tell which key signed a file.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings

ALGORITHM = "ed25519"


@dataclass(frozen=True)
class Signature:
    signature: str  # base64
    key_id: str
    algorithm: str = ALGORITHM


def key_id_of(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def load_or_create_private_key(path: Path | None = None) -> Ed25519PrivateKey:
    path = Path(path or settings.SIGNING_KEY_PATH)
    if path.exists():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError(f"{path} does not hold an Ed25519 private key.")
        return key
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_EXCL: if two processes race to create the key, exactly one wins; the other reads it.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return load_or_create_private_key(path)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    return key


def public_key_pem(path: Path | None = None) -> bytes:
    return (
        load_or_create_private_key(path)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def load_public_key(pem: bytes) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def sign(message: bytes, *, key_path: Path | None = None) -> Signature:
    key = load_or_create_private_key(key_path)
    return Signature(
        signature=base64.b64encode(key.sign(message)).decode("ascii"),
        key_id=key_id_of(key.public_key()),
    )


def verify(message: bytes, signature_b64: str, public_key: Ed25519PublicKey) -> bool:
    try:
        public_key.verify(base64.b64decode(signature_b64, validate=True), message)
    except (InvalidSignature, ValueError):
        return False
    return True
