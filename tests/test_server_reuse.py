"""The language server carries a version's findings over from the version before only
where they are the same: after every edit of a series (comments, `# noqa` comments added
and removed, code, lines added), its findings are `torchlint check`'s on the same text."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from cli_support import run_torchlint  # noqa: E402
from lsp_support import Session, run  # noqa: E402
from torchlint.integrations.server import reuse  # noqa: E402
from torchlint.integrations.server.documents import OpenDocuments  # noqa: E402
from torchlint.rule_api.registry import rule_infos  # noqa: E402

SOURCE = '''import torch
from torch import nn


class Block(nn.Module):
    """A block.
    # not a comment: this line is inside the docstring
    """

    def __init__(self):
        super().__init__()
        # the layers
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        # the input is not checked
        return self.conv(x)


def train(model, loader, optimizer):
    # one epoch
    for images, targets in loader:
        optimizer.zero_grad(set_to_none=False)
        loss = (model(images) - targets).pow(2).mean()
        loss.backward()
        optimizer.step()
        # report the loss
        print(loss.item())
'''


def _replaced(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


# (what the edit does, the edit, whether the findings may be carried over)
EDITS = [
    ("a comment grows", _replaced("# one epoch", "# one epoch!"), True),
    ("a comment above a finding changes", _replaced("# report the loss", "# report the loss now"), True),
    ("an own-line noqa comment", _replaced("# one epoch!", "# noqa: TL003"), False),
    ("it goes again", _replaced("# noqa: TL003", "# one epoch"), False),
    ("a noqa on the finding's line", _replaced("print(loss.item())", "print(loss.item())  # noqa: TL003"), False),
    ("it goes again", _replaced("print(loss.item())  # noqa: TL003", "print(loss.item())"), False),
    ("a line inside a docstring that looks like a comment", _replaced("# not a comment:", "# still not a comment:"), False),
    ("a comment line added: the findings move down", _replaced("    # one epoch\n", "    # one epoch\n    # two\n"), False),
    ("a comment after lines moved", _replaced("# two", "# two epochs"), True),
    ("a file-wide noqa", _replaced("# the layers", "# torchlint: noqa"), False),
    ("it goes again", _replaced("# torchlint: noqa", "# the layers"), False),
    ("code: the host sync goes", _replaced("print(loss.item())", "print(loss.detach())"), False),
    ("a comment once the finding went", _replaced("# the input is not checked", "# unchecked"), True),
    ("code: set_to_none=True", _replaced("set_to_none=False", "set_to_none=True"), False),
]


def cli_findings(root: Path, text: str) -> list:
    (root / "model.py").write_text(text, encoding="utf-8")
    result = run_torchlint("check", "--no-cache", "--output-format", "json", "model.py", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted(
        (d["code"], d["location"]["row"], d["location"]["column"], d["end_location"]["row"], d["end_location"]["column"], d["message"])
        for d in json.loads(result.stdout)
    )


def finding_key(d) -> tuple:
    return (d.code, d.location.row, d.location.column, d.end_location.row, d.end_location.column, d.message)


def linted_versions(root: Path, versions, then=None, pause: float = 0.0) -> tuple:
    """Each text of `versions` in turn as one open document's next version, linted as the
    server lints it: what each version showed; then, after `pause` seconds (typing
    paused), what `then(documents, uri, set_text)` returns (`set_text(text)` makes `text`
    the next version and gives the uri), or the latest version."""
    buffer = {}
    uri = "file://model"

    def set_text(text: str) -> str:
        buffer[uri] = (text, buffer[uri][1] + 1 if uri in buffer else 1)
        return uri

    async def scenario():
        with ThreadPoolExecutor(1) as executor:
            documents = open_documents(executor, lambda _: buffer[uri])
            documents.open(uri, root / "model.py", "model.py")
            shown = []
            for version, text in enumerate(versions, 1):
                latest = (await documents.refresh(set_text(text))).latest
                assert latest.version == version
                shown.append(latest)
            await asyncio.sleep(pause)
            after = documents.get(uri).latest if then is None else await then(documents, uri, set_text)
            return shown, after

    return run(scenario())


def open_documents(executor, current, linted=lambda document: None, project_running=lambda: None) -> OpenDocuments:
    """The server's open documents, in this process (`current`: uri -> (text, version))."""
    return OpenDocuments(
        executor,
        current,
        lambda: "utf-16",
        rule_infos(),
        linted,
        lambda error: pytest.fail(str(error)),
        pytest.fail,
        project_running,
    )


def texts():
    text = SOURCE
    yield "opened", text, False
    for what, edit, carried in EDITS:
        text = edit(text)
        yield what, text, carried


def test_every_edit_of_the_series_changes_the_text():
    seen = [text for _, text, _ in texts()]
    assert all(before != after for before, after in zip(seen, seen[1:]))


def test_each_versions_findings_are_the_clis_and_comment_edits_are_carried(tmp_path):
    document_root = tmp_path / "server"
    document_root.mkdir()
    cli_root = tmp_path / "cli"
    cli_root.mkdir()

    async def then(documents, uri, set_text):
        for text in (SOURCE, SOURCE.replace("# one epoch", "# one epoch!")):
            last = (await documents.refresh(set_text(text))).latest
        return last, (await documents.actionable(uri)).latest

    shown, (last, actionable) = linted_versions(document_root, [text for _, text, _ in texts()], then)
    seen = [
        (what, sorted(finding_key(d) for d in latest.findings.diagnostics), not latest.complete and not latest.local)
        for latest, (what, _, _) in zip(shown, texts())
    ]
    for (what, found, carried), (_, text, may_carry) in zip(seen, texts()):
        assert found == cli_findings(cli_root, text), what
        assert carried == may_carry, what
    assert sum(bool(found) for _, found, carried in seen if carried) >= 2  # carried findings were compared
    # a carried version has no fixes; code actions lint it through for them
    assert not last.complete and not any(d.fix for d in last.result.diagnostics)
    assert actionable.complete and actionable.version == last.version
    assert any(d.fix for d in actionable.result.diagnostics)


@pytest.mark.slow
def test_the_servers_published_diagnostics_after_each_edit_are_the_clis(tmp_path):
    """The same series through a real server process, as an editor sends it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "model.py").write_text(SOURCE, encoding="utf-8")
    cli_root = tmp_path / "cli"
    cli_root.mkdir()

    async def scenario():
        async with Session(workspace) as session:
            uri = session.open("model.py")
            published = [await session.diagnostics(uri, version=1)]
            for _, text, _ in list(texts())[1:]:
                version = session.replace_all(uri, text)
                published.append(await session.diagnostics(uri, version=version))
            return published

    published = run(scenario(), timeout=300)
    for diagnostics, (what, text, _) in zip(published, texts()):
        found = sorted(
            (d.code, d.range.start.line + 1, d.range.start.character + 1, d.range.end.line + 1, d.range.end.character + 1, d.message)
            for d in diagnostics
        )
        assert found == cli_findings(cli_root, text), what


# ---- the criterion on its own ----------------------------------------------------------


def test_only_own_line_comments_without_directives_count_as_comment_edits():
    before = "import torch\n\n# a\nx = 1  # b\n# c\n"
    assert reuse.comment_rows_changed(before, before.replace("# a", "# a!")) == [3]
    assert reuse.comment_rows_changed(before, before.replace("# c", "# see")) == [5]
    assert reuse.comment_rows_changed(before, before) == []
    assert reuse.comment_rows_changed(before, before.replace("# b", "# bb")) is None  # a code line
    assert reuse.comment_rows_changed(before, before.replace("# a", "# noqa")) is None
    assert reuse.comment_rows_changed(before, before.replace("# a", "# NoQA: TL003")) is None
    assert reuse.comment_rows_changed(before, before.replace("# a", "# torchlint: noqa")) is None
    assert reuse.comment_rows_changed(before, before.replace("# a\n", "# a\r\n")) is None
    assert reuse.comment_rows_changed(before, before.replace("# a\n", "# a\n# a2\n")) is None
    assert reuse.comment_rows_changed(before, before.replace("# a", "y = 2")) is None
    cookie = "# -*- coding: utf-8 -*-\nimport torch\n"
    assert reuse.comment_rows_changed(cookie, cookie.replace("utf-8", "latin-1")) is None
    assert reuse.comment_rows_changed(cookie, cookie.replace("# -*- coding: utf-8 -*-", "# licence")) is None
    shebang = "#!/usr/bin/env python\nimport torch\n"
    assert reuse.comment_rows_changed(shebang, shebang.replace("python", "python3")) is None
    licence = "# Copyright 2025\nimport torch\n"
    assert reuse.comment_rows_changed(licence, licence.replace("2025", "2026")) == [1]


def test_rows_inside_strings_are_found_and_no_row_is_trusted_in_a_text_that_does_not_parse():
    text = 'x = """\n# in\n"""\ny = f"""{x}\n# in too\n"""\n# out\n'
    assert reuse.string_rows(text) == {2, 3, 5, 6}
    assert reuse.string_rows("def f(:\n# c\n") == {1, 2}


def test_a_file_opened_as_it_is_on_disk_shows_what_the_cli_cached_for_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the server's working directory is the workspace's
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    checked = run_torchlint("check", "--output-format", "json", "model.py", cwd=tmp_path)  # fills the cache
    expected = sorted((d["code"], d["location"]["row"], d["message"]) for d in json.loads(checked.stdout))
    (tmp_path / "stale.py").write_text(SOURCE, encoding="utf-8")
    run_torchlint("check", "stale.py", cwd=tmp_path)
    (tmp_path / "stale.py").write_text(SOURCE.replace("print(loss.item())", "print(loss)"), encoding="utf-8")
    buffers = {"model": (SOURCE, 1), "edited": (SOURCE.replace("# one epoch", "# one epoch!"), 1), "stale": (SOURCE, 1)}

    async def scenario():
        with ThreadPoolExecutor(1) as executor:
            documents = open_documents(executor, lambda uri: buffers[uri])
            documents.open("model", tmp_path / "model.py", "model.py")
            documents.open("edited", tmp_path / "model.py", "model.py")  # unsaved changes
            documents.open("stale", tmp_path / "stale.py", "stale.py")  # changed on disk since the check
            return [(await documents.refresh(uri)).latest for uri in ("model", "edited", "stale")]

    cached, edited, stale = run(scenario())
    assert expected and sorted((d.code, d.location.row, d.message) for d in cached.findings.diagnostics) == expected
    assert not cached.complete
    assert edited.complete and stale.complete
    assert sorted((d.code, d.location.row, d.message) for d in stale.findings.diagnostics) == expected


def _rows_changed_line_by_line(before: str, after: str):
    """The reference: every line of both texts compared."""
    from torchlint.core.source import split_lines

    old, new = split_lines(before), split_lines(after)
    if len(old) != len(new):
        return None
    changed = []
    for row, (was, now) in enumerate(zip(old, new), 1):
        if was != now:
            if not all(reuse._plain_comment(line, row) for line in (was, now)) or reuse._ending(was) != reuse._ending(now):
                return None
            changed.append(row)
    return changed


def test_the_rows_changed_are_those_a_line_by_line_comparison_finds():
    import random

    pieces = ["# c", "#", "x = 1", "  # d", "", "\n", "\r\n", "\r", "!", "noqa", "y"]
    generator = random.Random(30)
    for _ in range(3000):
        before = "".join(generator.choice(pieces) for _ in range(generator.randint(0, 12)))
        after = list(before)
        for _ in range(generator.randint(1, 3)):
            at = generator.randint(0, len(after))
            if after and generator.random() < 0.4:
                del after[min(at, len(after) - 1)]
            else:
                after[at:at] = generator.choice(pieces)
        after = "".join(after)
        assert reuse.comment_rows_changed(before, after) == _rows_changed_line_by_line(before, after), (before, after)


def test_a_project_pass_that_caches_the_file_while_it_is_linted_shows_its_findings_first(tmp_path, monkeypatch):
    import threading

    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    busy = threading.Event()  # the lint thread is held until the pass has filled the cache
    shown = []

    async def scenario():
        with ThreadPoolExecutor(1) as executor:
            executor.submit(busy.wait, 60)
            project = asyncio.get_running_loop().create_future()
            documents = open_documents(
                executor, lambda _: (SOURCE, 1), lambda document: shown.append(document.latest), lambda: project
            )
            documents.open("model", tmp_path / "model.py", "model.py")
            refreshed = asyncio.ensure_future(documents.refresh("model"))
            await asyncio.sleep(0.2)
            assert not shown  # nothing cached yet: the lint waits
            checked = run_torchlint("check", "--output-format", "json", "model.py", cwd=tmp_path)
            project.set_result(None)
            for _ in range(100):
                if shown:
                    break
                await asyncio.sleep(0.05)
            early = list(shown)
            busy.set()
            await refreshed
            return checked, early, list(shown)

    checked, early, shown = run(scenario())
    expected = sorted((d["code"], d["location"]["row"], d["message"]) for d in json.loads(checked.stdout))
    assert len(early) == 1 and not early[0].complete
    assert sorted((d.code, d.location.row, d.message) for d in early[0].findings.diagnostics) == expected
    assert shown[-1].complete and any(d.fix for d in shown[-1].result.diagnostics)
    assert sorted((d.code, d.location.row, d.message) for d in shown[-1].findings.diagnostics) == expected
