"""Reading what users have: ``kubectl get KINDS -A -o yaml|json`` (a List, or one object), several files, a
directory of them, and the tree ``kubectl cluster-info dump --output-directory DIR`` writes (``nodes.json``,
``NAMESPACE/pods.json``, ``events.json``, ...: each a List; its ``logs.txt`` files are listed, not needed).

The objects come out in the order read, each with the file it came from; a file that cannot be decoded
(truncated, not JSON or YAML, not Kubernetes objects) is a DumpError naming it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from podlife.importer.errors import DumpError

_OBJECT_SUFFIXES = (".json", ".yaml", ".yml")
CALIBRATION = "podlife/calibration"   # podlife import --calibrate's timings, on the List it writes


@dataclass
class Read:
    """What the files held: (source file, object) pairs, and the files read or passed over."""

    objects: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)   # container logs of a cluster-info dump: kept, not needed
    calibration: dict[str, Any] = field(default_factory=dict)   # what podlife import --calibrate wrote


def read_dumps(paths: Sequence[str]) -> Read:
    out = Read()
    for path in paths:
        if os.path.isdir(path):
            for file in _walk(path):
                if file.endswith(_OBJECT_SUFFIXES):
                    _read_file(file, out)
                elif file.endswith((".txt", ".log")):
                    out.logs.append(file)
            if not out.files:
                raise DumpError(path, "no .json, .yaml or .yml files in the directory; expected the output of "
                                      "kubectl get ... -o yaml or kubectl cluster-info dump --output-directory")
        elif os.path.exists(path):
            _read_file(path, out)
        else:
            raise DumpError(path, "no such file or directory")
    return out


def _walk(root: str) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()   # a stable order, whatever the file system's
        for name in sorted(filenames):
            yield os.path.join(dirpath, name)


def _read_file(file: str, out: Read) -> None:
    try:
        with open(file, "rb") as f:
            data = f.read()
    except OSError as e:
        raise DumpError(file, f"cannot read: {e.strerror or e}") from None
    out.files.append(file)
    start = data.lstrip()[:1]
    docs = _json_documents(data, file) if start in (b"{", b"[") else _yaml_documents(data, file)
    for i, doc in enumerate(docs):
        if isinstance(doc, dict):
            note = ((doc.get("metadata") or {}).get("annotations") or {}).get(CALIBRATION)
            if isinstance(note, str):
                try:
                    out.calibration.update(orjson.loads(note))
                except orjson.JSONDecodeError:
                    raise DumpError(file, f"metadata.annotations[{CALIBRATION}]: expected JSON") from None
        for obj in _objects(doc, file, i):
            out.objects.append((file, obj))


def _json_documents(data: bytes, file: str) -> list[Any]:
    try:
        return [orjson.loads(data)]
    except orjson.JSONDecodeError:
        pass
    # kubectl cluster-info dump without --output-directory writes its Lists one after another
    text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return docs
        if text.startswith("==== START logs", pos):   # its log sections: skipped up to the next List
            nxt = text.find("\n{", pos)
            if nxt < 0:
                return docs
            pos = nxt + 1
            continue
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            line = text.count("\n", 0, e.pos) + 1
            cut = e.pos >= len(text.rstrip()) - 1 or text.rstrip()[-1:] not in ("}", "]") \
                or e.msg.startswith("Unterminated string")
            what = "the file ends in the middle of a JSON value (truncated?)" if cut else f"not valid JSON: {e.msg}"
            raise DumpError(f"{file}:{line}", f"{what}; expected the output of kubectl get ... -o json") from None
        docs.append(doc)


def _yaml_documents(data: bytes, file: str) -> list[Any]:
    import yaml

    from podlife.api.yamlread import fast_safe_loader

    loader = fast_safe_loader()
    try:
        return [d for d in yaml.load_all(data, Loader=loader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        ended = mark is not None and mark.index >= len(data.rstrip()) - 1
        what = "the file ends in the middle of a YAML document (truncated?)" if ended else f"not valid YAML: {problem}"
        raise DumpError(where, f"{what}; expected the output of kubectl get ... -o yaml") from None
    except ValueError as e:   # a value PyYAML cannot build (a timestamp out of range)
        raise DumpError(file, f"not valid YAML: {e}") from None


def _objects(doc: Any, file: str, index: int) -> Iterator[dict[str, Any]]:
    where = f"{file} (document {index + 1})" if index else file
    if isinstance(doc, list):   # a JSON array of objects
        items: Any = doc
    elif isinstance(doc, dict) and "items" in doc and "kind" not in doc and "apiVersion" in doc:
        # kubectl writes a List's kind after its items: a List without one was cut short
        raise DumpError(where, "a List without its kind: the file ends before the List does (truncated?); "
                               "expected the whole output of kubectl get ... -o yaml")
    elif isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
        items = doc.get("items") or []
    elif isinstance(doc, dict):
        items = [doc]
    else:
        raise DumpError(where, f"expected a Kubernetes object or a List, found {type(doc).__name__}")
    if not isinstance(items, list):
        raise DumpError(f"{where}: items", "expected a list of objects")
    list_kind = doc.get("kind", "") if isinstance(doc, dict) else ""
    for j, obj in enumerate(items):
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise DumpError(f"{where}: items[{j}]", "expected an object with metadata")
        if "kind" not in obj and list_kind.endswith("List") and list_kind != "List":
            obj["kind"] = list_kind[:-len("List")]   # a typed list (PodList) may leave its items' kind out
        if not isinstance(obj.get("kind"), str) or not obj["kind"]:
            raise DumpError(f"{where}: items[{j}]", "the object has no kind")
        if not isinstance(obj["metadata"].get("name"), str):
            raise DumpError(f"{where}: items[{j}]", f"{obj['kind']} has no metadata.name")
        if obj.get("spec") is not None and not isinstance(obj["spec"], dict):
            raise DumpError(f"{where}: items[{j}]", f"{obj['kind']} {obj['metadata']['name']}: spec: expected a "
                                                    "mapping")
        yield obj
