"""`torchlint server`: a real LSP client drives the server over stdio in a subprocess (slow)."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402

from cli_support import as_text, run_torchlint, write_tree  # noqa: E402
from lsp_support import Session, apply_text_edits, run, text_edits_for  # noqa: E402
from test_tl004_cudnn_rnn_double_backward import GRU_MODEL, penalty  # noqa: E402
from torchlint.integrations.server.actions import whole_text_edit  # noqa: E402
from torchlint.integrations.server.protocol import TextPositions  # noqa: E402
from torchlint.core.diagnostics import Location  # noqa: E402

TL003_URL = "https://github.com/torchlint/torchlint/blob/main/docs/rules/TL003.md"

# TL003 on lines 7 and 8 (safe fixes), TL304 on line 10 (an unsafe fix); the emoji before
# the first finding is two UTF-16 units
STEP = (
    "import pytorch_lightning as pl\n"
    "\n"
    "\n"
    "class M(pl.LightningModule):\n"
    "    def validation_step(self, batch, batch_idx):\n"
    "        loss = self(batch).mean()\n"
    '        self.log("\U0001f600/loss", loss.item(), prog_bar=True)\n'
    '        self.log_dict({"a": batch.sum().item(), "b": 1})\n'
    "        return loss\n"
    "\n"
    "\n"
    "def reset(optimizer):\n"
    "    optimizer.zero_grad(set_to_none=False)\n"
)
TL304_LINE = 13


def codes_on(diagnostics, line=None):
    return sorted(d.code for d in diagnostics if line is None or d.range.start.line + 1 == line)


def by_title(actions, start):
    return next(action for action in actions if action.title.startswith(start))


@pytest.mark.slow
def test_initialize_advertises_code_actions_and_the_negotiated_encoding(tmp_path):
    async def scenario():
        async with Session(tmp_path) as session:
            return session.server_capabilities

    capabilities = run(scenario())
    assert capabilities.position_encoding == types.PositionEncodingKind.Utf16
    assert capabilities.code_action_provider.resolve_provider is True
    assert set(capabilities.code_action_provider.code_action_kinds) == {"quickfix", "source.fixAll.torchlint"}
    assert capabilities.text_document_sync.change == types.TextDocumentSyncKind.Incremental


@pytest.mark.parametrize(
    "encoding, character",
    [
        (types.PositionEncodingKind.Utf16, 28),  # the emoji is a surrogate pair
        (types.PositionEncodingKind.Utf8, 30),  # four bytes
        (types.PositionEncodingKind.Utf32, 27),  # one code point
    ],
)
@pytest.mark.slow
def test_open_publishes_findings_with_code_range_severity_source_and_rule_page(tmp_path, encoding, character):
    write_tree(tmp_path, {"step.py": STEP})
    capabilities = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[encoding]),
    )

    async def scenario():
        async with Session(tmp_path, capabilities) as session:
            uri = session.open("step.py")
            return await session.diagnostics(uri, version=1)

    diagnostics = run(scenario())
    assert codes_on(diagnostics) == ["TL003", "TL003", "TL304"]
    first = diagnostics[0]
    assert first.range == types.Range(types.Position(6, character), types.Position(6, character + 11))
    assert first.severity == types.DiagnosticSeverity.Warning
    assert first.source == "torchlint"
    assert first.code_description.href == TL003_URL
    assert "`.item()`" in first.message


@pytest.mark.slow
def test_a_quick_fix_applied_makes_its_finding_go_and_an_unsafe_one_says_so(tmp_path):
    write_tree(tmp_path, {"step.py": STEP})

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open("step.py")
            await session.diagnostics(uri, version=1)
            on_item = await session.code_actions(uri, 7)
            on_zero_grad = await session.code_actions(uri, TL304_LINE)
            fix = by_title(on_item, "TL003")
            version = session.apply(uri, fix.edit)
            after = await session.diagnostics(uri, version=version)
            return session, uri, fix, by_title(on_zero_grad, "TL304"), after

    session, uri, fix, unsafe, after = run(scenario())
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.title == "TL003: Log the tensor: `.detach()` instead of `.item()`"
    assert [d.code for d in fix.diagnostics] == ["TL003"]
    assert fix.edit.document_changes[0].text_document.version == 1
    assert '        self.log("\U0001f600/loss", loss.detach(), prog_bar=True)\n' in session.texts[uri]
    assert codes_on(after, 7) == [] and codes_on(after) == ["TL003", "TL304"]
    assert unsafe.title.endswith("(unsafe)") and not unsafe.is_preferred


@pytest.mark.slow
def test_fix_all_applies_the_safe_fixes_through_resolve(tmp_path):
    write_tree(tmp_path, {"step.py": STEP})

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open("step.py")
            await session.diagnostics(uri, version=1)
            offered = await session.code_actions(uri, 1, only=["source.fixAll"])
            resolved = await session.resolve(offered[0])
            version = session.apply(uri, resolved.edit)
            return session, uri, offered, resolved, await session.diagnostics(uri, version=version)

    session, uri, offered, resolved, after = run(scenario())
    assert [(a.title, a.kind, a.edit) for a in offered] == [("Fix all torchlint", "source.fixAll.torchlint", None)]
    assert len(text_edits_for(uri, resolved.edit)) == 1  # one small edit, not the whole file
    assert session.texts[uri] == STEP.replace(".item()", ".detach()")
    assert codes_on(after) == ["TL304"]  # the unsafe fix is not applied


@pytest.mark.slow
def test_fix_all_without_resolve_support_comes_with_its_edit(tmp_path):
    write_tree(tmp_path, {"step.py": STEP})
    capabilities = types.ClientCapabilities()  # no resolve, no documentChanges

    async def scenario():
        async with Session(tmp_path, capabilities) as session:
            uri = session.open("step.py")
            await session.diagnostics(uri, version=1)
            offered = await session.code_actions(uri, 1, only=["source"])
            quick_only = await session.code_actions(uri, 7, only=["quickfix"])
            return uri, offered, quick_only

    uri, offered, quick_only = run(scenario())
    assert [action.title for action in offered] == ["Fix all torchlint"]
    assert apply_text_edits(STEP, offered[0].edit.changes[uri]) == STEP.replace(".item()", ".detach()")
    assert "Fix all torchlint" not in [action.title for action in quick_only]


@pytest.mark.slow
def test_disable_for_this_line_adds_a_noqa_or_extends_one(tmp_path):
    text = STEP.replace("set_to_none=False)\n", "set_to_none=False)  # noqa: TL999\n")
    write_tree(tmp_path, {"step.py": text})

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open("step.py")
            await session.diagnostics(uri, version=1)
            version = session.apply(uri, by_title(await session.code_actions(uri, 7), "Disable TL003").edit)
            await session.diagnostics(uri, version=version)
            version = session.apply(uri, by_title(await session.code_actions(uri, TL304_LINE), "Disable TL304").edit)
            return session, uri, await session.diagnostics(uri, version=version)

    session, uri, after = run(scenario())
    lines = session.texts[uri].splitlines()
    assert lines[6] == '        self.log("\U0001f600/loss", loss.item(), prog_bar=True)  # noqa: TL003'
    assert lines[TL304_LINE - 1] == "    optimizer.zero_grad(set_to_none=False)  # noqa: TL999, TL304"
    assert codes_on(after) == ["TL003"]  # line 8's


@pytest.mark.slow
def test_a_text_that_does_not_parse_keeps_its_last_good_findings(tmp_path):
    write_tree(tmp_path, {"step.py": STEP})

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open("step.py")
            good = await session.diagnostics(uri, version=1)
            broken = session.replace_all(uri, STEP.replace("def reset(optimizer):", "def reset(optimizer:"))
            while_broken = await session.diagnostics(uri, version=broken)
            repaired = session.replace_all(uri, STEP.replace("loss.item()", "loss.detach()"))
            return good, while_broken, await session.diagnostics(uri, version=repaired)

    good, while_broken, repaired = run(scenario())
    assert while_broken[: len(good)] == good
    assert codes_on(while_broken[len(good):]) == ["TL000"]
    assert codes_on(repaired) == ["TL003", "TL304"]


@pytest.mark.slow
def test_config_selection_per_file_ignores_and_noqa_are_the_clis(tmp_path):
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.torchlint]\nignore = ["TL304"]\n[tool.torchlint.per-file-ignores]\n"legacy/*" = ["TL003"]\n',
            "step.py": STEP.replace("loss.item(), prog_bar=True)", "loss.item(), prog_bar=True)  # noqa: TL003"),
            "legacy/step.py": STEP,
        },
    )

    async def scenario():
        async with Session(tmp_path) as session:
            here, legacy = session.open("step.py"), session.open("legacy/step.py")
            return await session.diagnostics(here, version=1), await session.diagnostics(legacy, version=1)

    here, legacy = run(scenario())
    assert [(d.code, d.range.start.line + 1) for d in here] == [("TL003", 8)]
    assert list(legacy) == []


@pytest.mark.slow
def test_a_cross_file_finding_arrives_in_the_background_and_follows_unsaved_edits(tmp_path):
    train = penalty("from pkg.models import Critic")
    write_tree(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/models.py": GRU_MODEL, "train.py": train})

    async def scenario():
        async with Session(tmp_path) as session:
            models = session.uri("src/pkg/models.py")
            uri = session.open("train.py")
            found = await session.diagnostics(models, until=lambda found: bool(found))
            opened = session.open("src/pkg/models.py")
            on_layer = await session.code_actions(opened, 8)
            session.replace_all(uri, train.replace("create_graph=True", "create_graph=False"))
            gone = await session.diagnostics(models, until=lambda found: not found)
            return found, on_layer, gone

    found, on_layer, gone = run(scenario())
    assert [(d.code, d.range.start.line + 1) for d in found] == [("TL004", 8)]
    assert "train.py:7" in found[0].message
    assert any(a.title.startswith("TL004") and a.title.endswith("(unsafe)") for a in on_layer)
    assert list(gone) == []
    assert (tmp_path / ".torchlint_cache").is_dir()  # the pass went through the CLI's cache



@pytest.mark.slow
def test_the_configured_baseline_hides_in_the_editor_what_it_hides_in_the_cli(tmp_path):
    write_tree(tmp_path, {
        "pyproject.toml": '[tool.torchlint]\nbaseline = "torchlint-baseline.json"\n',
        "pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "train.py": penalty("from pkg.models import Critic"),
        "legacy.py": STEP,
    })
    wrote = run_torchlint("check", "--no-cache", "--write-baseline", "torchlint-baseline.json", ".", cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    # after the baseline: a file of its own findings, and a cross-file finding in a new model
    write_tree(tmp_path, {"new.py": STEP, "pkg/fresh.py": GRU_MODEL, "retrain.py": penalty("from pkg.fresh import Critic")})

    async def scenario():
        async with Session(tmp_path) as session:
            legacy, new = session.open("legacy.py"), session.open("new.py")
            shown = await session.diagnostics(legacy, version=1), await session.diagnostics(new, version=1)
            fresh = await session.diagnostics(session.uri("pkg/fresh.py"), until=lambda found: bool(found))
            return shown, fresh, session.published.get(session.uri("pkg/models.py"), [])

    (legacy, new), fresh, models = run(scenario())
    assert list(legacy) == [] and codes_on(new) == ["TL003", "TL003", "TL304"]
    assert codes_on(fresh) == ["TL004"]  # the project pass ran ...
    assert all(not params.diagnostics for params in models)  # ... and kept the baselined TL004 back

def test_without_pygls_the_server_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)  # not importable, as without the extra
    result = as_text(run_torchlint("server"))
    assert result.returncode == 2
    # commands that work where no package index serves torchlint (checked in test_docs_blocks)
    assert result.stderr.startswith("error: `torchlint server` needs pygls (the `server` extra): ")
    assert "`python -m pip install -e '.[server]'`" in result.stderr and "'torchlint[server]'" not in result.stderr


# ---- positions and edits, without a client ---------------------------------------------


def test_positions_count_utf16_units_and_end_where_the_lsp_ends_a_text():
    text = "a = '\U0001f600'\r\nb = 1"
    positions = TextPositions(text, types.PositionEncodingKind.Utf16)
    assert positions.at(Location(1, 7)) == types.Position(0, 7)  # after the emoji
    assert positions.at(Location(2, 6)) == types.Position(1, 5)  # end of a last line without an ending
    assert positions.at(Location(3, 1)) == types.Position(1, 5)  # past the end: the end
    assert TextPositions("x\n", "utf-16").at(Location(2, 1)) == types.Position(1, 0)


def test_the_fix_all_edit_is_small_and_never_splits_a_crlf():
    before = "a = 1\r\nb = x.item()\r\nc = 3\r\n"
    after = "a = 1\r\nb = x.detach()\r\nc = 3\r\n"
    (edit,) = whole_text_edit(before, after, "utf-16")
    assert edit.range == types.Range(types.Position(1, 6), types.Position(1, 10)) and edit.new_text == "detach"
    (edit,) = whole_text_edit("a\r\n", "a\r\nb\r\n", "utf-16")
    assert apply_text_edits("a\r\n", [edit]) == "a\r\nb\r\n"
    assert whole_text_edit(before, before, "utf-16") == []
