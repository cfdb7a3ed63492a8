"""A development-only SECRET_KEY: random per checkout, stored under var/ (never committed)."""

import secrets
from pathlib import Path


def development_secret_key(var_dir: Path) -> str:
    path = var_dir / "dev-secret-key"
    if path.exists():
        return path.read_text().strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    path.chmod(0o600)
    return key
