"""How often ``podlife diagnose`` recovers an injected fault from what a user would see.

    python bench/diagnose.py [--cases 90] [--seed 0] [--json out.json]

Each case (podlife.diagnose.cases) is a generated scenario with one fault of the searched kinds (cycled, so
each kind has the same share) at a random instant on a random target, and the user's delete of a pod after
it. podlife runs it; only the node's kubelet log (klog text) and the Events (as kubectl get events -o json)
are kept and diagnosed. A case counts for top-1 when the best hypothesis is the injected fault type, for
top-2 when one of the first two is; the fault's instant is recovered when the best hypothesis' span of tied
instants contains it (within 2 s). Figures: bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from podlife.diagnose import cases, diagnose


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=90)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    rows = []
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            case = cases.generate(i, args.seed)
            paths = cases.evidence(case, f"{tmp}/{i}")
            if not cases.visible(case, paths, f"{tmp}/{i}-clean"):
                rows.append({"case": i, "fault": case.fault, "target": case.target, "at": case.at, "visible": False})
                print(f"{i:3d} {case.fault:17s} left no trace in the evidence: not counted", flush=True)
                continue
            _, d = diagnose(paths)
            names = [h.name for h in d.ranked]
            best = d.ranked[0]
            hit = [h for h in d.ranked if h.name == case.fault]
            timed = bool(hit) and bool(hit[0].instants) and \
                min(hit[0].instants) - 2 <= case.at <= max(hit[0].instants) + 2
            rows.append({"case": i, "fault": case.fault, "target": case.target, "at": case.at,
                         "top": names[:3], "score": round(best.score, 3), "top1": names[0] == case.fault,
                         "top2": case.fault in names[:2], "timed": timed, "runs": d.runs, "visible": True})
            print(f"{i:3d} {case.fault:17s} top: {', '.join(names[:2]):40s} {'✓' if rows[-1]['top1'] else '·'}"
                  f"{'✓' if rows[-1]['top2'] else '·'} score {best.score:.3f}", flush=True)
    hidden = [r for r in rows if not r["visible"]]
    rows = [r for r in rows if r["visible"]]
    n = len(rows)
    top1 = sum(r["top1"] for r in rows) / n
    top2 = sum(r["top2"] for r in rows) / n
    timed = sum(r["timed"] for r in rows) / n
    print(f"\ncases {n}  top-1 {top1:.1%}  top-2 {top2:.1%}  instant recovered (top-1 kind) {timed:.1%}  "
          f"wall {time.time() - t0:.0f} s")
    print(f"left no trace (not counted): {len(hidden)} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(Counter(r['fault'] for r in hidden).items()))})")
    by = Counter(r["fault"] for r in rows)
    for kind in sorted(by):
        mine = [r for r in rows if r["fault"] == kind]
        print(f"  {kind:17s} {len(mine):3d}  top-1 {sum(r['top1'] for r in mine) / len(mine):.0%}  "
              f"top-2 {sum(r['top2'] for r in mine) / len(mine):.0%}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"top1": top1, "top2": top2, "rows": rows, "hidden": hidden},
                                                   indent=1))


if __name__ == "__main__":
    main()
