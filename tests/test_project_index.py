"""The typed file index: one record per file (round-trips through JSON), pending findings
with conditions from a closed set, and the one resolver that decides them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cache_support import read_pack
from cli_support import run_torchlint, write_tree
from test_host_sync_across_files import SHARED_STEP_BASE, SHARED_STEP_MODEL
from test_tl004_cudnn_rnn_double_backward import GRU_MODEL, penalty
from torchlint.analysis.flow_facts import FlowArgument, FlowCall, FlowFacts, FlowFunction
from torchlint.analysis.loop_facts import TRAINING, Criterion, Loop, LoopFacts, OwnerLoops
from torchlint.analysis.modules import ClassFacts
from torchlint.core.config import Config
from torchlint.core.diagnostics import Diagnostic, Location
from torchlint.engine import lint_text
from torchlint.rule_api.registry import all_rules
from torchlint.analysis.pending import (
    CONDITIONS, ClassIs, HotPathReaches, ImportNotKeptElsewhere, LoopReaches, ModelInput, Pending, RnnLayerNote,
    NameNotTakenElsewhere, SecondOrderReaches, SkipInput, SourceLoadedUnrestricted,
)
from torchlint.analysis.submodule_calls import SubmoduleCall
from torchlint.index.record import FileRecord, SecondOrderSite
from torchlint.index.resolver import project_findings

RULES = {rule.code: rule for rule in all_rules()}


def finding(code: str, path: str = "pkg/b.py", message: str = "m") -> Diagnostic:
    return Diagnostic(code, message, path, Location(3, 5), Location(3, 9))


def records_of(files, *codes):
    """Each file's record as the per-file pass builds it, with these rules selected."""
    rules = [RULES[code] for code in codes]
    records = {}
    for path, text in files.items():
        result = lint_text(text, path, Config(), rules)
        assert not result.errors, result.errors
        records[path] = result.facts
    return records, rules


def decided(records, *codes):
    return project_findings(records, [RULES[code] for code in codes], Config())


def round_trip(record: FileRecord) -> FileRecord:
    return FileRecord.from_json(json.loads(json.dumps(record.to_json())))


# ---- the record --------------------------------------------------------------------


def test_a_record_with_every_kind_of_pending_finding_round_trips_through_json():
    otherwise = finding("TL201", message="loaded in {where}")
    conditions = [
        ClassIs("pkg.b.Net", "module"),
        ModelInput("pkg.b.Net"),
        SkipInput("pkg.b.Decoder", ((0, "skip"), (None, "extra"))),
        HotPathReaches("pkg.b.Net", "helper", True, frozenset({"validation_step"}), False),
        LoopReaches("pkg.b.step", (0, 2), "`step`"),
        SecondOrderReaches("pkg.b.Cell", RnnLayerNote("nn.GRU", None, None), ("critic",), True),
        ImportNotKeptElsewhere("wandb"),
        SourceLoadedUnrestricted("args.resume", otherwise),
        NameNotTakenElsewhere("Variable", finding("TL102", message="{where} imports it")),
    ]
    assert {type(condition) for condition in conditions} == set(CONDITIONS)
    record = FileRecord(
        classes=(ClassFacts("pkg.b.Net", ("torch.nn.Module", None), ("forward",), ("module",)),),
        self_calls={"pkg.b.Net": {"forward": ["helper"]}},
        imported_modules=(".a", "wandb"),
        names_taken=(".a.Net", "pkg.plain.Variable"),
        staying_imports=("wandb",),
        submodule_uses=("Block",),
        submodule_calls=(SubmoduleCall("Decoder", (True, False), None, {"skip": True}),),
        unrestricted_loads=("args.resume",),
        object_saves=('"whole.pt"',),
        import_table={"nn": "torch.nn"},
        loops=LoopFacts({
            "pkg.b.<module>": OwnerLoops(False, ("pkg.b.step",), (), (Loop(0, ("pkg.b.step",), ("pkg.b.step",), True, -1),)),
            "pkg.b.step": OwnerLoops(
                True, ("pkg.b.log",), ("pkg.b.log",), (Loop(TRAINING, (), ("pkg.b.log",), False, 0),),
                (Criterion("pkg.b.Focal", 0, "self.criterion"),),
            ),
        }),
        flow=FlowFacts(
            (FlowCall("pkg.b.penalty", "pkg.b.train", (FlowArgument(0, ("param:critic",)), FlowArgument("gen", ()))),),
            {"pkg.b.make": FlowFunction(("depth",), ("pkg.b.Critic",))},
            {"Critic": ".models.Critic"},
        ),
        second_order_sites=(SecondOrderSite(7, "`torch.autograd.grad(..., create_graph=True)`", False, ("pkg.a",), (("pkg.b.f", "critic"),)),),
        pending=[Pending(finding("TL002"), condition) for condition in conditions],
    )
    assert round_trip(record) == record


def test_the_record_the_per_file_pass_builds_round_trips_through_json():
    files = {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/train.py": penalty("from .models import Critic")}
    records, _ = records_of(files, "TL001", "TL002", "TL003", "TL004", "TL005", "TL201")
    train = records["pkg/train.py"]
    assert train.second_order_sites and train.flow and train.loops and train.import_table is not None
    assert {facts.name for facts in records["pkg/models.py"].classes} == {"pkg.models.Critic"}
    for record in records.values():
        assert round_trip(record) == record


# ---- each kind of condition, decided both ways ---------------------------------------


def _module_base(module_base: bool) -> FileRecord:
    base = "torch.nn.Module" if module_base else "builtins.object"
    return FileRecord(classes=(ClassFacts("pkg.a.Base", (base,), (), ()),))


@pytest.mark.parametrize("holds", [True, False])
def test_class_is_a_module_through_a_base_in_another_file(holds):
    # a body that shows module evidence does not count for this condition: bases, else `forward`
    net = ClassFacts("pkg.b.Net", ("pkg.a.Base",), (), ("module",))
    records = {
        "pkg/a.py": _module_base(holds),
        "pkg/b.py": FileRecord(classes=(net,), pending=[Pending(finding("TL002"), ClassIs("pkg.b.Net", "module"))]),
    }
    assert decided(records, "TL002") == ([finding("TL002")] if holds else [])


@pytest.mark.parametrize("holds", [True, False])
def test_class_is_an_rnn_layer_through_a_base_in_another_file(holds):
    base = "torch.nn.GRU" if holds else "torch.nn.Linear"
    records = {
        "pkg/a.py": FileRecord(classes=(ClassFacts("pkg.a.Cell", (base,), ()),)),
        "pkg/b.py": FileRecord(pending=[Pending(finding("TL004"), ClassIs("pkg.a.Cell", "rnn"))]),
    }
    assert decided(records, "TL004") == ([finding("TL004")] if holds else [])


@pytest.mark.parametrize("used_as_a_block", [False, True])
def test_a_model_input_is_reported_unless_another_class_uses_the_model_as_a_block(used_as_a_block):
    records = {
        "pkg/a.py": _module_base(True),
        "pkg/b.py": FileRecord(
            classes=(ClassFacts("pkg.b.Net", ("pkg.a.Base",), ("forward",)),),
            pending=[Pending(finding("TL002"), ModelInput("pkg.b.Net"))],
        ),
        "pkg/c.py": FileRecord(submodule_uses=("Net",) if used_as_a_block else ()),
    }
    assert decided(records, "TL002") == ([] if used_as_a_block else [finding("TL002")])


@pytest.mark.parametrize("internal", [True, False])
def test_a_skip_input_is_reported_unless_every_caller_passes_its_own_layers_outputs(internal):
    records = {
        "pkg/a.py": _module_base(True),
        "pkg/b.py": FileRecord(
            classes=(ClassFacts("pkg.b.Decoder", ("pkg.a.Base",), ("forward",)),),
            pending=[Pending(finding("TL002"), SkipInput("pkg.b.Decoder", ((1, "skip"),)))],
        ),
        "pkg/c.py": FileRecord(submodule_calls=(SubmoduleCall("Decoder", (True, internal), None, {}),)),
    }
    assert decided(records, "TL002") == ([] if internal else [finding("TL002")])


@pytest.mark.parametrize("kept_elsewhere", [False, True])
def test_a_heavy_import_is_reported_unless_a_module_it_imports_keeps_importing_it(kept_elsewhere):
    records = {
        "pkg/a.py": FileRecord(staying_imports=("wandb",) if kept_elsewhere else ()),
        "pkg/b.py": FileRecord(
            imported_modules=(".a", "wandb"), pending=[Pending(finding("TL001"), ImportNotKeptElsewhere("wandb"))]
        ),
    }
    assert decided(records, "TL001") == ([] if kept_elsewhere else [finding("TL001")])


@pytest.mark.parametrize("loaded_elsewhere", [False, True])
def test_a_checkpoint_source_loaded_unrestricted_elsewhere_picks_the_other_finding(loaded_elsewhere):
    otherwise = finding("TL201", message="source {where}")
    records = {
        "pkg/a.py": FileRecord(unrestricted_loads=("args.resume",) if loaded_elsewhere else ()),
        "pkg/b.py": FileRecord(pending=[Pending(finding("TL201"), SourceLoadedUnrestricted("args.resume", otherwise))]),
        "pkg/c.py": FileRecord(object_saves=('"whole.pt"',)),
        "pkg/d.py": FileRecord(pending=[Pending(finding("TL201"), SourceLoadedUnrestricted('"whole.pt"', otherwise))]),
    }
    expected = (finding("TL201", message="source is loaded with `weights_only=False` in pkg/a.py")
                if loaded_elsewhere else finding("TL201"))
    saved = finding("TL201", message="source is where pkg/c.py saves a whole object with `torch.save`")
    assert decided(records, "TL201") == [expected, saved]


@pytest.mark.parametrize("reached", [True, False])
def test_a_method_a_hot_path_of_another_file_reaches(reached):
    model = SHARED_STEP_MODEL if reached else SHARED_STEP_MODEL.replace('self._shared_step(batch, "train")', "self(batch).mean()")
    records, _ = records_of({"pkg/__init__.py": "", "pkg/base.py": SHARED_STEP_BASE, "pkg/model.py": model}, "TL003")
    assert HotPathReaches in {type(item.condition) for item in records["pkg/base.py"].pending}
    found = decided(records, "TL003")
    assert [(d.filename, d.location.row) for d in found] == ([("pkg/base.py", 7)] if reached else [])


STEP = "def step(model, batch):\n    loss = model(batch).mean()\n    print(loss.item())\n    return loss\n"


def training_loop(trains: bool) -> str:
    body = "        loss.backward()\n        opt.step()\n" if trains else "        print(loss)\n"
    return (
        "from .steps import step\n\n\ndef fit(model, loader, opt):\n    for batch in loader:\n"
        f"        loss = step(model, batch)\n{body}"
    )


@pytest.mark.parametrize("trains", [True, False])
def test_a_function_a_training_loop_of_another_file_runs(trains):
    files = {"pkg/__init__.py": "", "pkg/steps.py": STEP, "pkg/train.py": training_loop(trains)}
    records, _ = records_of(files, "TL003")
    assert [type(item.condition) for item in records["pkg/steps.py"].pending] == [LoopReaches]
    found = decided(records, "TL003")
    assert [(d.filename, d.location.row) for d in found] == ([("pkg/steps.py", 3)] if trains else [])


@pytest.mark.parametrize("import_line", ["from .models import Critic", "from .other import Critic"])
def test_an_rnn_layer_a_double_backward_site_of_another_file_reaches(import_line):
    files = {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/train.py": penalty(import_line)}
    records, _ = records_of(files, "TL004")
    assert [type(item.condition) for item in records["pkg/models.py"].pending] == [SecondOrderReaches]
    found = decided(records, "TL004")
    reached = import_line.endswith(".models import Critic")
    assert [(d.filename, d.location.row) for d in found] == ([("pkg/models.py", 8)] if reached else [])


# ---- through the CLI, cold and warm -------------------------------------------------------


def test_a_cross_file_finding_from_a_cold_run_and_from_the_cached_records(tmp_path: Path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/train.py": penalty("from .models import Critic")})
    check = ("check", "--select", "TL004", "--output-format", "concise", ".")
    cold = run_torchlint(*check, cwd=root)
    assert cold.returncode == 1 and b"pkg/models.py:8:20: TL004" in cold.stdout
    [facts] = sorted((root / ".torchlint_cache").glob("v*/*.facts"))
    entries = read_pack(facts)["files"]
    assert set(entries) == {"__init__.py", "models.py", "train.py"}
    assert all(set(entry) == {"key", "record"} for entry in entries.values())  # one record per file
    for project in (root / ".torchlint_cache").glob("v*/*.project"):
        project.unlink()  # so that the warm run's project pass reads every cached record
    warm = run_torchlint(*check, cwd=root)
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
