"""SHA-256 from the interpreter's own module where it has one: ``hashlib`` loads OpenSSL for it, about 12M
instructions at start-up that a run (which hashes only a few names for its seeds) does not need."""

from __future__ import annotations

try:
    from _sha2 import sha256  # type: ignore[import-not-found, unused-ignore]   # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found, no-redef, unused-ignore]   # Python 3.11
    except ImportError:   # an interpreter built without them
        from hashlib import sha256  # type: ignore[assignment, unused-ignore]

__all__ = ["sha256"]
