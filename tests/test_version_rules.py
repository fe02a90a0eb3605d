"""The version rules table (podlife.versions): a typed Profile for every modelled minor, each rule set on each,
and mypy refusing a rule or a value the table does not have."""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import textwrap
import typing
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path

import pytest

from podlife.api import validation
from podlife.versions import DROPPED_FIELD_GATES, MODELLED_VERSIONS, RULES, DroppedField, Profile, profile

SRC = Path(__file__).resolve().parents[1] / "src"
NOT_RULES = {"version", "minor", "gates", "set_gates", "dropped_fields"}


def _fits(value: object, hint: object) -> bool:
    """``value`` is of the field's declared type (the types the table uses)."""
    if typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, float)
    if hint is str:
        return isinstance(value, str)
    if typing.get_origin(hint) is Mapping:
        return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, int) for k, v in value.items())
    if typing.get_origin(hint) is tuple:
        return isinstance(value, tuple) and all(isinstance(v, str) for v in value)
    raise AssertionError(f"a rule typed {hint}: extend _fits")


def test_a_profile_for_every_minor_from_1_18_to_1_37():
    assert MODELLED_VERSIONS == tuple(f"1.{m}" for m in range(18, 38))
    assert [profile(v).minor for v in MODELLED_VERSIONS] == list(range(18, 38))
    with pytest.raises(ValueError, match='Kubernetes version "1.38" is not modelled'):
        profile("1.38")


def test_every_rule_is_a_typed_field_set_on_every_version():
    hints = typing.get_type_hints(Profile)
    rule_fields = [f.name for f in fields(Profile) if f.name not in NOT_RULES]
    assert rule_fields == [r.name for r in RULES]          # the table is the Profile's body, in its order
    assert len(RULES) == 116
    for r in RULES:
        hint = hints[r.name]
        assert r.changes[0].since == 18, r.name
        assert [c.since for c in r.changes] == sorted({c.since for c in r.changes}), r.name
        for value in [c.value for c in r.changes] + ([r.on, r.off] if r.gate else []):
            assert _fits(value, hint), (r.name, value, hint)
    for v in MODELLED_VERSIONS:
        p = profile(v)
        for r in RULES:
            assert _fits(getattr(p, r.name), hints[r.name]), (v, r.name)


def test_feature_gates_switch_the_rules_they_name():
    assert profile("1.28").native_sidecars == "off"
    assert profile("1.28", {"SidecarContainers": True}).native_sidecars == "unordered"
    assert profile("1.35", {"ContainerRestartRules": False}).drops("container_restart_rules")
    assert not profile("1.35").drops("container_restart_rules")
    assert set(typing.get_args(DroppedField)) == set(DROPPED_FIELD_GATES)


def test_a_profile_is_frozen():
    p = profile("1.30")
    with pytest.raises(AttributeError):
        p.native_sidecars = "off"  # type: ignore[misc]


def test_validation_without_a_version_is_an_error():
    """The validation rules come from the Profile set around the write; none set is an error, not the newest."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    with pytest.raises(RuntimeError, match=r"validation ran without a version's rules"):
        contextvars.Context().run(validation.validate, pod)
    token = validation.set_rules(profile("1.30"))
    try:
        assert contextvars.copy_context().run(validation.options.rules).version == "1.30"
    finally:
        validation.reset_rules(token)


def test_mypy_refuses_an_unknown_rule_or_value(tmp_path):
    pytest.importorskip("mypy")
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""\
        from typing import Literal

        from podlife.versions import Change, Profile, rule


        def use(p: Profile) -> None:
            print(p.native_sidecar)
            if p.native_sidecars == "orderd":
                pass
            if p.drops("lifecycle_sleeep"):
                pass
            if p.zero_grace == "one-second" and p.exec_probe_timeout and p.drops("lifecycle_sleep"):
                pass


        bad: Literal["on", "off"] = rule("a table row with a misspelled value", (
            Change(18, "on", "x"), Change(20, "of", "y")))
        """))
    # a process of its own: mypy raises the interpreter's recursion limit, which the YAML reader's depth check sees
    done = subprocess.run([sys.executable, "-m", "mypy", str(probe), "--strict-equality", "--no-error-summary",
                           "--hide-error-context", "--cache-dir", str(tmp_path / "cache"), "--python-version", "3.11"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=300)
    lines = sorted(line.split(": error: ")[1] for line in done.stdout.splitlines() if ": error: " in line)
    assert done.returncode == 1
    assert lines == [
        '"Profile" has no attribute "native_sidecar"; maybe "native_sidecars"?  [attr-defined]',
        'Argument 1 to "drops" of "Profile" has incompatible type "Literal[\'lifecycle_sleeep\']"; expected '
        '"Literal[\'probe_grace\', \'probe_grpc\', \'sts_pvc_retention\', \'cronjob_time_zone\', '
        '\'scheduling_gates\', \'pdb_unhealthy_policy\', \'lifecycle_sleep\', \'container_restart_rules\', '
        '\'job_pod_failure_policy\', \'job_indexed\', \'job_backoff_limit_per_index\', \'job_success_policy\', '
        '\'job_pod_replacement_policy\', \'sidecar_restart_policy\', \'ds_max_surge\', \'sts_start_ordinal\']"'
        '  [arg-type]',
        'Argument 2 to "Change" has incompatible type "Literal[\'of\']"; expected "Literal[\'on\', \'off\']"  '
        '[arg-type]',
        'Non-overlapping equality check (left operand type: "Literal[\'off\', \'ordered\', \'unordered\']", right '
        'operand type: "Literal[\'orderd\']")  [comparison-overlap]',
    ]
