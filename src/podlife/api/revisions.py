"""A stored object's revisions: whether a write changes what is stored, and the next revision made without
copying what it keeps."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj


def unchanged(old: Obj, new: Obj) -> bool:
    """Whether ``new`` would be stored as ``old`` is: the resourceVersion is not part of the stored bytes
    (etcd3's versioner clears it before encoding), everything else is."""
    if new.keys() != old.keys():
        return False
    # a part the revision shares with the stored object (its spec, on a status write) is not compared
    for k, v in new.items():
        if k != "metadata" and v is not old[k] and v != old[k]:
            return False
    nmd, omd = new["metadata"], old["metadata"]
    if nmd.keys() - {"resourceVersion"} != omd.keys() - {"resourceVersion"}:
        return False
    return all(v is omd[k] or v == omd[k] for k, v in nmd.items() if k != "resourceVersion")


def same(part: Any) -> Any:
    return part


def revision(obj: Obj) -> Obj:
    """The next revision of a stored object, to be changed in its metadata or by replacing its other top-level
    fields. Stored objects are never changed in place, so a revision shares what it does not replace with the
    one before (a pod's spec across its status writes) instead of copying it."""
    new = dict(obj)
    new["metadata"] = dict(obj["metadata"])
    return new
