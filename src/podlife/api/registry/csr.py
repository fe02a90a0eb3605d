"""certificatesigningrequests/approval: pkg/registry/certificates/certificates/strategy.go csrApprovalStrategy.

An approval write changes only status.conditions: spec and the rest of the status stay as stored
(PrepareForUpdate), a condition's empty timestamps are filled (populateConditionTimestamps), and the conditions
are validated as pkg/apis/certificates/validation ValidateCertificateSigningRequestApprovalUpdate does.
"""

from __future__ import annotations

from typing import Any

from podlife.api.errors import FieldError
from podlife.api.meta import Obj, clone

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
_STATUSES = ["False", "True", "Unknown"]
_TRUE_ONLY = frozenset((APPROVED, DENIED, FAILED))   # trueConditionTypes
_EXCLUSIVE = "Approved and Denied conditions are mutually exclusive"


def prepare_approval(new: Obj, old: Obj, written: Obj, now: str) -> None:
    """``new`` is the stored object's next revision: it takes only the written status.conditions."""
    conds = [clone(c) for c in ((written.get("status") or {}).get("conditions") or ()) if isinstance(c, dict)]
    old_conds = (old.get("status") or {}).get("conditions") or ()
    for c in conds:
        # populateConditionTimestamps: lastUpdateTime now when unset; lastTransitionTime from the old condition
        # of the same type and status, else now
        if not c.get("lastUpdateTime"):
            c["lastUpdateTime"] = now
        if not c.get("lastTransitionTime"):
            same = [o for o in old_conds if o.get("type") == c.get("type") and o.get("status") == c.get("status")
                    and o.get("lastTransitionTime")]
            c["lastTransitionTime"] = same[0]["lastTransitionTime"] if same else now
    status = clone(old.get("status") or {})
    if conds:
        status["conditions"] = conds
    else:
        status.pop("conditions", None)
    new["status"] = status


def validate_approval(new: Obj) -> list[FieldError]:
    """pkg/apis/certificates/validation validateConditions (empty types, both Approved and Denied and duplicate
    types are refused, as for a CSR whose stored conditions have none of these)."""
    errs: list[FieldError] = []
    conds: list[Any] = (new.get("status") or {}).get("conditions") or []
    seen: set[str] = set()
    approved = denied = False
    for i, c in enumerate(conds):
        p = f"status.conditions[{i}]"
        t, s = c.get("type") or "", c.get("status") or ""
        if not t:
            errs.append(FieldError(f"{p}.type", "Required value"))
        allowed = ["True"] if t in _TRUE_ONLY else _STATUSES
        if not s:
            errs.append(FieldError(f"{p}.status", "Required value"))
        elif s not in allowed:
            errs.append(FieldError(f"{p}.status", "Unsupported value",
                                   "supported values: " + ", ".join(f'"{v}"' for v in allowed), s))
        if t == APPROVED:
            approved = True
            if denied:
                errs.append(FieldError(f"{p}.type", "Invalid value", _EXCLUSIVE, t))
        elif t == DENIED:
            denied = True
            if approved:
                errs.append(FieldError(f"{p}.type", "Invalid value", _EXCLUSIVE, t))
        if t in seen:
            errs.append(FieldError(f"{p}.type", "Duplicate value", value=t))
        seen.add(t)
    return errs
