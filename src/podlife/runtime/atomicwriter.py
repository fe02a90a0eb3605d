"""The kubelet's atomic writer (pkg/volume/util/atomic_writer.go), which every API-data volume is written with.

Layout in the volume directory: the files live in a timestamped directory ``..2026_12_06_07_30_00.123456789``;
the symlink ``..data`` points at it; each top-level name of the payload is a symlink ``name -> ..data/name``.
An update writes a new timestamped directory, points ``..data_tmp`` at it and renames that over ``..data``
(one atomic step: a reader sees the old set or the new one, never a mix), adds the symlinks of new names,
then removes the old directory and the symlinks of names gone. Nothing is written when the payload is
unchanged.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time

DATA = "..data"
DATA_TMP = "..data_tmp"
Payload = dict[str, tuple[bytes, int]]


def _current(volume: str) -> Payload | None:
    """The payload the volume holds now (None: never written)."""
    target = os.path.join(volume, DATA)
    if not os.path.islink(target):
        return None
    out: Payload = {}
    base = os.path.realpath(target)
    for root, _dirs, files in os.walk(base):
        for f in files:
            full = os.path.join(root, f)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, base)] = (fh.read(), os.stat(full).st_mode & 0o7777)
    return out


def _validate(path: str) -> None:
    # atomic_writer.go validatePath: relative, no "..", not starting with ".."
    parts = path.split("/")
    if not path or os.path.isabs(path) or ".." in parts or path.startswith(".."):
        raise ValueError(f"invalid path {path!r}")


def write(volume: str, payload: Payload) -> bool:
    """Make ``volume`` hold exactly ``payload``; True when it wrote."""
    for path in payload:
        _validate(path)
    os.makedirs(volume, exist_ok=True)
    old = _current(volume)
    if old == payload:
        return False
    old_dir = os.readlink(os.path.join(volume, DATA)) if old is not None else None
    # os.MkdirTemp(targetDir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + str(secrets.randbelow(10**9))
    ts_dir = os.path.join(volume, stamp)
    os.mkdir(ts_dir, 0o755)
    for path, (content, mode) in sorted(payload.items()):
        full = os.path.join(ts_dir, path)
        os.makedirs(os.path.dirname(full), 0o755, exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(content)
        os.chmod(full, mode)
    tmp = os.path.join(volume, DATA_TMP)
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(stamp, tmp)
    os.rename(tmp, os.path.join(volume, DATA))
    tops = {p.split("/")[0] for p in payload}
    for top in sorted(tops):
        link = os.path.join(volume, top)
        if not os.path.lexists(link):
            os.symlink(os.path.join(DATA, top), link)
    for top in sorted({p.split("/")[0] for p in old or {}} - tops):
        link = os.path.join(volume, top)
        if os.path.islink(link):
            os.unlink(link)
    if old_dir is not None:
        shutil.rmtree(os.path.join(volume, old_dir), ignore_errors=True)
    return True
