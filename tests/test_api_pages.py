"""The selection a chunked LIST keeps between its pages gives what filtering every object again gives."""

from __future__ import annotations

from podlife.api.meta import Obj
from podlife.apiserver.pages import Pages, page_key


def _obj(ns: str, name: str) -> Obj:
    return {"metadata": {"namespace": ns, "name": name}}


def _fresh(objs: list[Obj], key: str) -> list[Obj]:
    return [o for o in objs if page_key(o) > key]


def test_after_a_key_is_the_suffix_when_the_keys_ascend() -> None:
    objs = [_obj("a", "p1"), _obj("a", "p2"), _obj("b", "p1")]
    sel = Pages().selected(("Pod", 5, None, "", ""), lambda: objs)
    assert sel.ascending
    assert sel.after("a/p1") == [objs[1], objs[2]]
    assert sel.after("a/p2") == _fresh(objs, "a/p2") == [objs[2]]
    assert sel.after("b/p1") == []
    # a page of ``limit`` needs one more object than it shows, to tell whether another page follows
    assert sel.after("a/p1", 1) == [objs[1], objs[2]] and sel.after("", 1) == [objs[0], objs[1]]
    assert sel.after("a/p2", 5) == [objs[2]]


def test_keys_out_of_order_are_filtered_as_a_fresh_read_does() -> None:
    # ("team-1", …) sorts before ("team-1-x", …) as a tuple, but "team-1/…" after "team-1-x/…" as a key
    objs = [_obj("team-1", "p"), _obj("team-1-x", "p"), _obj("team-2", "p")]
    sel = Pages().selected(("Pod", 5, None, "", ""), lambda: objs)
    assert not sel.ascending
    assert sel.after("team-1-x/p") == _fresh(objs, "team-1-x/p") == [objs[0], objs[2]]


def test_a_selection_is_read_once_per_listing_and_the_oldest_forgotten() -> None:
    reads: list[int] = []
    pages = Pages()

    def read(rv: int) -> list[Obj]:
        reads.append(rv)
        return []
    for rv in (1, 1, 2, 3, 4, 5, 1):
        pages.selected(("Pod", rv, None, "", ""), lambda rv=rv: read(rv))
    assert reads == [1, 2, 3, 4, 5, 1]
