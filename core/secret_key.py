"""A development secret key, generated once into var/ so none is ever written in the code."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def development_secret_key(*, var_dir: Path) -> str:
    """The key in `var_dir/secret_key`, created on first use (web, worker and beat agree on it)."""
    path = var_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    draft = var_dir / f".secret_key.{os.getpid()}"
    draft.write_text(secrets.token_urlsafe(50))
    draft.chmod(0o600)
    try:
        # link() is atomic and refuses an existing name: processes starting together keep one key.
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_text().strip()
