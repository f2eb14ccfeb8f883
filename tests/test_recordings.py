"""Every committed recording of a real framework agrees with its ruleset, case by case."""

from __future__ import annotations

from pathlib import Path

import pytest

from promote_cli.probes.recordings import compare, load_recording

RECORDINGS = sorted(p for p in (Path(__file__).parent / "data" / "recordings").glob("*.json"))


def test_there_are_recordings():
    assert len(RECORDINGS) >= 3


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_recording_agrees_with_ruleset(path):
    data = load_recording(path)
    assert data["cases"], f"{path.name} holds no cases"
    assert data.get("version"), f"{path.name} does not say which version was recorded"
    total, mismatches = compare(data)
    shown = "\n".join(m.line() for m in mismatches[:20])
    assert not mismatches, f"{len(mismatches)} of {total} cases disagree with {data['ruleset']}:\n{shown}"
