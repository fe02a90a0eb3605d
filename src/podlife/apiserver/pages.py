"""The pages of a chunked LIST read at one revision (``limit`` + ``continue``), kept between its requests.

A continue token reads the store at the revision of the list's first page (store.snapshot), so every page of one
listing reads the same objects: they are selected and sorted once and each page starts where the token's key
falls, instead of copying, sorting and filtering every object of the kind again per page (300 pages for
``kubectl get pods -A`` of 150,000 pods). The result of each page is what a fresh read gives; only the cost
differs. A compacted revision is not served from here (the caller checks Store.kept first)."""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from podlife.api.meta import Obj

KEEP = 4   # listings in progress at once whose selection is kept


def page_key(o: Obj) -> str:
    """The key a continue token holds (etcd's ``namespace/name`` under the resource's prefix)."""
    md = o["metadata"]
    return f"{md.get('namespace', '')}/{md['name']}"


@dataclass(frozen=True)
class Selected:
    """The objects of one listing at one revision, in the order a read gives them, with their keys."""
    objs: list[Obj]
    keys: list[str]
    ascending: bool   # the keys are in increasing order, so the objects after a key are a suffix

    def after(self, key: str, limit: int = 0) -> list[Obj]:
        """The objects whose key sorts after ``key``, in order; with ``limit``, no more than limit + 1 of them
        (enough to tell whether a page is the last)."""
        if self.ascending:
            at = bisect_right(self.keys, key)
            return self.objs[at:at + limit + 1] if limit > 0 else self.objs[at:]
        return [o for k, o in zip(self.keys, self.objs) if k > key]


class Pages:
    """The few most recent selections, by (kind, revision, namespace, label selector, field selector)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, int, str | None, str, str], Selected] = OrderedDict()

    def selected(self, key: tuple[str, int, str | None, str, str], read: Callable[[], list[Obj]]) -> Selected:
        got = self._kept.get(key)
        if got is None:
            objs = read()
            keys = [page_key(o) for o in objs]
            got = Selected(objs, keys, all(a < b for a, b in zip(keys, keys[1:])))
            self._kept[key] = got
            while len(self._kept) > KEEP:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
        return got
