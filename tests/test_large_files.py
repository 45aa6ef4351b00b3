"""Large files cost bounded time and memory: a 5 MB single-line data literal used to
take 10 minutes and 11 GB. Blanking the data keeps every position and every finding."""

from __future__ import annotations

import json
import sys

from cli_support import REPO, run_torchlint

sys.path.insert(0, str(REPO / "bench"))
from large_files import data_literal  # noqa: E402
from measure import measure  # noqa: E402

TORCHLINT = (sys.executable, "-m", "torchlint", "check", "--no-cache", "--output-format", "json")


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
    numbers = ", ".join(f"{i / 7:.5f}" for i in range(30_000))
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
    """Thousands of definitions no rule needs sit around the ones that hold findings:
    rows, columns, fixes and `# noqa` on multi-line statements stay exact."""
    text = (
        "import torch\nimport wandb as W\nimport lightning.pytorch as pl\n\n\n"
        + _plain_functions(2_000, 0)
        + "def report(values):\n    W.log({'n': len(values)})\n\n\n"
        + _plain_functions(2_000, 2_000)
        + "class Model(pl.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        "        loss = batch.sum()\n"
        "        self.log('loss', loss.item())\n"
        "        self.log(\n            'kept', loss.item(),\n        )  # noqa: TL003\n"
        "        return loss\n\n\n"
        + _plain_functions(1_000, 4_000)
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
