"""Large files cost bounded time and memory: a 5 MB single-line data literal used to
take 10 minutes and 11 GB. Blanking the data keeps every position and every finding."""

from __future__ import annotations

import json
import sys

import pytest

from cli_support import REPO, run_torchlint
from torchlint.core.parse import DATA_TEXT_MIN

sys.path.insert(0, str(REPO / "bench"))
from large_files import data_literal  # noqa: E402
from measure import measure  # noqa: E402

TORCHLINT = (sys.executable, "-m", "torchlint", "check", "--no-cache", "--output-format", "json")


@pytest.mark.slow  # a process of its own: its peak memory is what is measured
def test_five_megabyte_data_literal_is_linted_in_bounded_time_and_memory(tmp_path):
    text = data_literal(5_000_000)
    (tmp_path / "data.py").write_text(text)
    sample = measure([*TORCHLINT, "data.py"], tmp_path, timeout=300)
    assert not sample.timed_out
    assert sample.exit_code == 1, sample.stderr_tail
    assert sample.stderr_tail == ""
    assert sample.wall < 60, sample  # about 3 s on an idle machine; it used to take 10 minutes
    assert sample.rss_process < 1024**3, sample  # it used to take 11 GB


def test_findings_and_fixes_after_bulk_data_keep_their_columns(tmp_path):
    numbers = ", ".join(f"{i / 7:.5f}" for i in range(8_000))  # twice: well over DATA_TEXT_MIN
    assert 2 * len(numbers) > 1.5 * DATA_TEXT_MIN
    text = (
        "import lightning.pytorch as pl\n\n\n"
        "class Model(pl.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        f"        table = [{numbers},\n            {numbers}]; self.log(\"loss\", batch.item())\n"
        "        return table\n"
    )
    path = tmp_path / "model.py"
    path.write_text(text)
    completed = run_torchlint("check", "--no-cache", "--output-format", "json", "--select", "TL003", str(path))
    (finding,) = json.loads(completed.stdout)
    assert (finding["location"]["row"], finding["location"]["column"]) == (7, text.split("\n")[6].index("batch.item()") + 1)
    run_torchlint("check", "--no-cache", "--fix", str(path))
    assert path.read_text() == text.replace("batch.item()", "batch.detach()")


def test_a_syntax_error_inside_bulk_data_is_still_reported(tmp_path):
    numbers = [f"{i}.5" for i in range(30_000)]
    numbers[20_000] = "1_"  # an invalid number literal
    path = tmp_path / "data.py"
    path.write_text("import wandb\nDATA = [" + ", ".join(numbers) + "]\n")
    completed = run_torchlint("check", "--no-cache", "--output-format", "json", str(path))
    (finding,) = json.loads(completed.stdout)
    assert finding["code"] == "TL000"
    assert finding["location"]["row"] == 2


def _plain_functions(count: int, start: int) -> str:
    return "".join(f"def helper_{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(start, start + count))


def test_a_large_file_parses_only_what_rules_need_and_keeps_positions_fixes_and_noqa(tmp_path):
    """Hundreds of definitions no rule needs sit around the ones that hold findings:
    rows, columns, fixes and `# noqa` on multi-line statements stay exact."""
    text = (
        "import torch\nimport wandb as W\nimport lightning.pytorch as pl\n\n\n"
        + _plain_functions(200, 0)
        + "def report(values):\n    W.log({'n': len(values)})\n\n\n"
        + _plain_functions(200, 200)
        + "class Model(pl.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        "        loss = batch.sum()\n"
        "        self.log('loss', loss.item())\n"
        "        self.log(\n            'kept', loss.item(),\n        )  # noqa: TL003\n"
        "        return loss\n\n\n"
        + _plain_functions(100, 400)
    )
    path = tmp_path / "big.py"
    path.write_text(text)
    lines = text.split("\n")
    completed = run_torchlint("check", "--no-cache", "--output-format", "json", str(path))
    found = sorted((f["code"], f["location"]["row"], f["location"]["column"]) for f in json.loads(completed.stdout))
    import_row = lines.index("import wandb as W") + 1
    sync_row = lines.index("        self.log('loss', loss.item())") + 1
    assert found == [("TL001", import_row, 1), ("TL003", sync_row, lines[sync_row - 1].index("loss.item()") + 1)]
    run_torchlint("check", "--no-cache", "--fix", str(path))
    expected = text.replace("import wandb as W\n", "").replace(
        "def report(values):\n    W.log(", "def report(values):\n    import wandb as W\n\n    W.log("
    ).replace("self.log('loss', loss.item())", "self.log('loss', loss.detach())")
    assert path.read_text() == expected


# ---- files with more top-level statements than a whole parse should hold (issue 23, 13) ----

from torchlint.core import large_files as large_text  # noqa: E402
from torchlint.cli import main  # noqa: E402

# findings among filler statements: a heavy import read later (TL001), torch.load in a
# function that a decorator and a helper bound far away go with (TL201), a multi-line
# call with its noqa on the closing line, and one after a multi-line string that holds
# lines a cut could start at
LARGE_BODY = (
    "import torch\nimport wandb\n"
    "{filler_a}"
    "LIMIT = 3\n"
    "{filler_b}"
    "def cached(fn):\n    return fn\n\n\n"
    "@cached\ndef restore(path):\n    torch.load(\n        path,\n    )  # noqa: TL201\n    return torch.load(path, map_location=pick(LIMIT))\n\n\n"
    "{filler_c}"
    'NOTE = """\nx = 1\ndef not_code(:\n"""\n'
    "def pick(n):\n    return 'cpu' if n else None\n\n\n"
    "def log(v):\n    wandb.log({{'v': v}})\n    return torch.load(v)\n"
    "{filler_d}"
)


def _filler(start: int, count: int) -> str:
    return "".join(f"value_{i} = {i}\n" for i in range(start, start + count))


def large_module() -> str:
    return LARGE_BODY.format(
        filler_a=_filler(0, 150), filler_b=_filler(150, 150), filler_c=_filler(300, 150), filler_d=_filler(450, 150)
    )


def _check(tmp_path, monkeypatch, capsys, name="big.py", *flags):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["check", "--no-cache", "--output-format", "json", *flags, name])
    out = capsys.readouterr().out
    return code, [(d["code"], d["location"]["row"], d["location"]["column"], d["end_location"]["row"], d["noqa_row"]) for d in json.loads(out)]


def test_a_file_of_many_statements_is_linted_through_the_statements_rules_need(tmp_path, monkeypatch, capsys):
    """The mechanism, small: with the threshold at 100 statements, the file of 600 is
    parsed in chunks and cut down; its findings are those of the whole parse, at the
    same rows and columns, only without fixes."""
    (tmp_path / "big.py").write_text(large_module())
    monkeypatch.setattr(large_text, "CHUNK_LINES", 40)  # cuts land inside the string too
    whole = _check(tmp_path, monkeypatch, capsys)
    assert whole[0] == 1 and len(whole[1]) >= 3, whole
    monkeypatch.setattr(large_text, "LARGE_STATEMENTS", 100)
    assert large_text.is_large(large_module())
    reduced = large_text.reduce(large_module(), ["torch.load", "wandb"])
    assert reduced.statements < 15 and len(reduced.rows) < 40  # of more than 600
    assert _check(tmp_path, monkeypatch, capsys) == whole
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "--fix", "big.py"]) == 1  # no fix is offered...
    assert (tmp_path / "big.py").read_text() == large_module()  # ...nor written


def test_a_large_file_with_cr_only_line_endings_is_cut_the_same_way(tmp_path, monkeypatch, capsys):
    (tmp_path / "big.py").write_bytes(large_module().replace("\n", "\r").encode())
    whole = _check(tmp_path, monkeypatch, capsys)
    assert whole[0] == 1 and len(whole[1]) >= 3, whole
    monkeypatch.setattr(large_text, "LARGE_STATEMENTS", 100)
    monkeypatch.setattr(large_text, "CHUNK_LINES", 40)
    assert large_text.is_large(large_module().replace("\n", "\r"))
    assert _check(tmp_path, monkeypatch, capsys) == whole


def test_a_syntax_error_far_into_a_large_file_is_reported_at_its_row(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(large_text, "LARGE_STATEMENTS", 100)
    monkeypatch.setattr(large_text, "CHUNK_LINES", 40)
    text = large_module().replace("value_500 = 500\n", "value_500 = (500\n")
    (tmp_path / "big.py").write_text(text)
    row = text.split("\n").index("value_500 = (500") + 1
    code, found = _check(tmp_path, monkeypatch, capsys)
    assert code == 1 and [(c, r) for c, r, *_ in found] == [("TL000", row)]


def test_beyond_the_bound_a_file_gets_one_finding_that_says_so(tmp_path, monkeypatch, capsys):
    (tmp_path / "big.py").write_text(large_module())
    monkeypatch.setattr(large_text, "MAX_LINES", 500)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["check", "--no-cache", "--output-format", "concise", "big.py"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"big.py:1:1: TL000 Not linted: the file has {large_module().count(chr(10)) + 1:,} lines; "
        "torchlint lints files of up to 500"
    )
    assert len([line for line in out if ": TL" in line]) == 1


def test_a_large_file_where_every_statement_matters_gets_one_finding(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(large_text, "LARGE_STATEMENTS", 100)
    (tmp_path / "big.py").write_text("import torch\n" + "".join(f"m{i} = torch.load('{i}.pt')\n" for i in range(300)))
    code, found = _check(tmp_path, monkeypatch, capsys)
    assert code == 1 and [c for c, *_ in found] == ["TL000"]


@pytest.mark.slow
def test_a_million_line_file_is_linted_within_one_gibibyte(tmp_path):
    """The bound of issue 23: 1,000,000 one-line statements (about 10 MB) in under 1 GiB
    and about 30 s of CPU (wall time on this shared machine is looser)."""
    text = LARGE_BODY.format(filler_a=_filler(0, 250_000), filler_b=_filler(250_000, 250_000),
                             filler_c=_filler(500_000, 250_000), filler_d=_filler(750_000, 250_000))
    (tmp_path / "big.py").write_text(text)
    sample = measure([*TORCHLINT, "big.py"], tmp_path, timeout=600)
    assert not sample.timed_out and sample.exit_code == 1, sample
    assert sample.rss_process < 1024**3, sample
    assert sample.cpu < 60, sample
    print(f"1,000,000 statements, {len(text) / 1e6:.1f} MB: wall {sample.wall:.1f} s, CPU {sample.cpu:.1f} s, peak RSS {sample.rss_process / 2**20:.0f} MiB")


TRAINING_LOOP = (
    "\n\nimport torch\n\n\n"
    "def train(model, loader, optimizer):\n"
    "    for batch in loader:\n"
    "        loss = model(batch)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        print(loss.item())\n"
)


@pytest.mark.slow  # a process of its own: its peak memory is what is measured
def test_one_six_megabyte_dict_literal_beside_a_training_loop_costs_bounded_time_and_memory(tmp_path):
    entries = "".join(f"    'key_{i}': {i},\n" for i in range(300_000))
    text = "TABLE = {\n" + entries + "}\n" + TRAINING_LOOP
    (tmp_path / "table.py").write_text(text)
    sample = measure([*TORCHLINT, "table.py"], tmp_path, timeout=300)
    assert not sample.timed_out and sample.exit_code == 1, sample.stderr_tail
    assert sample.cpu < 40, sample  # 102 s when LibCST parsed the whole file
    assert sample.rss_process < 1.5 * 1024**3, sample  # 3.2 GB
    (finding,) = _findings(tmp_path, "table.py")
    assert (finding["code"], finding["location"]["row"]) == ("TL003", text.count("\n"))


@pytest.mark.slow
def test_one_statement_of_200000_item_calls_gets_one_finding_in_bounded_time_and_memory(tmp_path):
    (tmp_path / "items.py").write_text("import torch\nvalues = [\n" + "    a.item(),\n" * 200_000 + "]\n")
    sample = measure([*TORCHLINT, "items.py"], tmp_path, timeout=300)
    assert not sample.timed_out and sample.exit_code == 1, sample.stderr_tail
    assert sample.cpu < 40, sample  # 167 s
    assert sample.rss_process < 1.5 * 1024**3, sample  # 3.7 GB
    (finding,) = _findings(tmp_path, "items.py")
    assert finding["code"] == "TL000" and "Not linted: the statements that hold what rules look for" in finding["message"]


def _findings(tmp_path, name):
    return json.loads(run_torchlint("check", "--no-cache", "--output-format", "json", name, cwd=tmp_path).stdout)
