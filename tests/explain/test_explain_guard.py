"""explain recommends the run-time guard for the families it catches, and only for those."""

import json

from torchlint.explain.guard_advice import GUARD_CATCHES
from torchlint.explain.knowledge import load_knowledge


def test_every_guard_family_is_a_signature_of_the_knowledge_base():
    assert set(GUARD_CATCHES) <= {signature.id for signature in load_knowledge().signatures}


def test_a_device_side_assert_log_recommends_the_guard(samples_dir, run_explain):
    out = run_explain([str(samples_dir / "device-side-assert.log")])
    assert out.returncode == 0
    prevented = out.stdout[out.stdout.index("Prevented by"):]
    assert "torchlint.runtime.guard(model): checks embedding ids" in " ".join(prevented.split())


def test_json_carries_the_guard_line_for_caught_families_and_null_otherwise(samples_dir, run_explain):
    for sample, expected in (("cuda-illegal-memory-access.log", True), ("cudnn-execution-failed.log", True),
                             ("cudnn-rnn-projected-double-backward.log", True), ("cuda-out-of-memory.log", False)):
        data = json.loads(run_explain(["--format", "json", str(samples_dir / sample)]).stdout)
        first = data["matches"][0]
        assert (first["guard"] is not None) == expected, (sample, first["id"])
        if expected:
            assert first["guard"].startswith("torchlint.runtime.guard(model): ")
