"""The cache through the CLI: keyed by the project path, robust to corrupt entries, pruned."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cache_support import read_pack, write_pack, write_pack_text
from cli_support import run_torchlint, write_tree
from torchlint.run.cache_key import signed, user_key
from test_tl004_cudnn_rnn_double_backward import GRU_MODEL, penalty

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"
DAY = 86400


def concise(*args, cwd):
    return run_torchlint("check", "--output-format", "concise", *args, cwd=cwd)


def packs(root: Path) -> list:
    return sorted((root / ".torchlint_cache").glob("v*/*.json"))


def the_pack(root: Path) -> Path:
    [pack] = packs(root)
    return pack


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint.per-file-ignores]\n"tests/*" = ["TL001"]\n')
    for directory in ("src", "tests"):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "a.py").write_text(BAD)
    return tmp_path


@pytest.mark.parametrize("order", [("src", "tests"), ("tests", "src")])
def test_same_content_in_two_places_keeps_its_own_per_file_ignores(project, order):
    # run from inside each directory, so that both files are displayed as `a.py`
    for _ in range(2):  # the second round reads what the first one cached
        for directory in order:
            result = concise("a.py", cwd=project / directory)
            expected = 0 if directory == "tests" else 1
            assert result.returncode == expected, (directory, result.stdout.decode())


def test_the_cache_does_not_depend_on_the_working_directory(project):
    concise("src/a.py", cwd=project)
    before = the_pack(project).read_bytes()
    concise("a.py", cwd=project / "src")
    assert packs(project) == [the_pack(project)] and the_pack(project).read_bytes() == before


def _corrupt_entry(change):
    def corrupt(pack: Path) -> None:
        data = read_pack(pack)
        [entry] = data["files"].values()
        change(entry)
        write_pack(pack, data)

    return corrupt


def _set_row(entry):
    entry["diagnostics"][0]["location"]["row"] = "1"


def _drop_message(entry):
    del entry["diagnostics"][0]["message"]


def _list_location(entry):
    entry["diagnostics"][0]["location"] = [1, 1]


def _used_text(entry):
    entry["used"] = "today"


def _bad_applicability(entry):
    entry["diagnostics"][0]["fix"]["applicability"] = "always"


def _edits_dict(entry):
    entry["diagnostics"][0]["fix"]["edits"] = {"content": ""}


def _bool_column(entry):
    entry["diagnostics"][0]["end_location"]["column"] = True


def _write(text: str):
    return lambda pack: write_pack_text(pack, text)


CORRUPTIONS = {
    "row-as-string": _corrupt_entry(_set_row),
    "missing-key": _corrupt_entry(_drop_message),
    "list-for-dict": _corrupt_entry(_list_location),
    "used-string": _corrupt_entry(_used_text),
    "unknown-applicability": _corrupt_entry(_bad_applicability),
    "edits-dict": _corrupt_entry(_edits_dict),
    "bool-column": _corrupt_entry(_bool_column),
    "entry-list": lambda pack: write_pack(pack, {"files": {"a.py": [1, 2]}}),
    "files-list": _write('{"files": []}'),
    "pack-list": _write("[]"),
    "truncated": lambda pack: pack.write_bytes(pack.read_bytes()[:40]),
    "binary": lambda pack: pack.write_bytes(b"\x00\xff not json"),
    "signed-binary": lambda pack: pack.write_bytes(signed(user_key(), pack.name, b"\x00\xff not json")),
    "unsigned": lambda pack: pack.write_bytes(pack.read_bytes().partition(b"\n")[2]),
    "signed-as-another-pack": lambda pack: pack.write_bytes(signed(user_key(), "0" * 32 + ".json", b'{"files": {}}')),
    "deep": lambda pack: write_pack_text(pack, '{"files": ' + "[" * 100_000 + "]" * 100_000 + "}"),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_entry_is_a_miss_and_is_overwritten(tmp_path, corrupt):
    (tmp_path / "a.py").write_text(BAD)
    cold = concise(".", cwd=tmp_path)
    assert cold.returncode == 1 and b"TL001" in cold.stdout
    corrupt(the_pack(tmp_path))
    for _ in range(2):  # the run after the corrupt one reads what it wrote back
        again = concise(".", cwd=tmp_path)
        assert (again.returncode, again.stdout, again.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    [entry] = read_pack(the_pack(tmp_path))["files"].values()
    assert type(entry["diagnostics"][0]["location"]["row"]) is int


# ---- facts and project findings: a project rule (TL004) finds across two files --------

CROSS_FILE = {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/train.py": penalty("from .models import Critic")}


def _stored(root: Path, suffix: str) -> list:
    return sorted((root / ".torchlint_cache").glob(f"v*/*{suffix}"))


def _cross_file_tree(root: Path):
    write_tree(root, CROSS_FILE)
    cold = concise(".", cwd=root)
    assert cold.returncode == 1 and b"pkg/models.py:8:20: TL004" in cold.stdout
    return cold


def _lose(path: Path) -> None:
    path.unlink()


def _foreign_facts(path: Path) -> None:
    data = read_pack(path)
    for entry in data["files"].values():
        entry["key"] = "another run's"
    write_pack(path, data)


FACTS_FAULTS = {
    "lost": _lose,
    "foreign-key": _foreign_facts,
    "facts-list": lambda path: write_pack(path, {"files": {"models.py": {"key": "k", "facts": []}}}),
    "binary": lambda path: path.write_bytes(b"\x00\xff"),
}


@pytest.mark.parametrize("fault", FACTS_FAULTS.values(), ids=FACTS_FAULTS.keys())
def test_findings_whose_facts_are_lost_are_linted_again_for_them(tmp_path, fault):
    cold = _cross_file_tree(tmp_path)
    for project in _stored(tmp_path, ".project"):
        project.unlink()  # so that the project pass needs every file's facts
    [facts] = _stored(tmp_path, ".facts")
    fault(facts)
    for _ in range(2):  # the second run reads the facts the first one wrote back
        again = concise(".", cwd=tmp_path)
        assert (again.returncode, again.stdout, again.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert set(read_pack(facts)["files"]) == {"__init__.py", "models.py", "train.py"}


def test_project_findings_are_cached_per_file_set_and_follow_every_change(tmp_path):
    cold = _cross_file_tree(tmp_path)
    [project] = _stored(tmp_path, ".project")
    assert concise(".", cwd=tmp_path).stdout == cold.stdout
    project.write_bytes(b"\x00 corrupt")
    assert concise(".", cwd=tmp_path).stdout == cold.stdout
    assert read_pack(project)["diagnostics"][0]["code"] == "TL004"
    # the penalty no longer takes a second derivative: the model is fine
    train = tmp_path / "pkg" / "train.py"
    train.write_text(train.read_text().replace("create_graph=True", "create_graph=False"))
    changed = concise(".", cwd=tmp_path)
    assert changed.returncode == 0 and b"TL004" not in changed.stdout
    # another set of files is another entry; each gives its own answer
    only_models = concise("pkg/models.py", cwd=tmp_path)
    assert only_models.returncode == 0 and len(_stored(tmp_path, ".project")) == 2
    train.write_text(CROSS_FILE["pkg/train.py"])
    assert concise(".", cwd=tmp_path).stdout == cold.stdout


def _age(path: Path, days: float) -> None:
    then = time.time() - days * DAY
    os.utime(path, (then, then))


def test_entries_of_files_unused_for_a_month_are_dropped(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "gone.py").write_text(BAD)
    concise(".", cwd=tmp_path)
    pack = the_pack(tmp_path)
    data = read_pack(pack)
    assert set(data["files"]) == {"a.py", "gone.py"}
    today = int(time.time() // DAY)
    data["files"]["gone.py"]["used"] = today - 31
    data["files"]["a.py"]["used"] = today - 1  # its hit today rewrites the pack
    write_pack(pack, data)
    (tmp_path / "gone.py").unlink()
    concise(".", cwd=tmp_path)
    assert set(read_pack(pack)["files"]) == {"a.py"}


def test_stale_packs_and_old_versions_are_pruned_once_a_day_and_nothing_else(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    concise(".", cwd=tmp_path)
    pack = the_pack(tmp_path)
    version = pack.parent
    cache = version.parent
    stale = version / ("0" * 32 + ".json")
    stale.write_text('{"files": {}}')
    _age(stale, 40)
    foreign = version / "ab"  # not a name torchlint writes: never deleted
    foreign.mkdir()
    (foreign / "abcdef.json").write_text("{}")
    kept_file = version / "notes.txt"
    kept_file.write_text("mine")
    _age(kept_file, 400)
    old_version, recent_version, other_version = cache / "v0.0.1", cache / "v0.0.2", cache / "v0.0.3"
    for directory in (old_version, recent_version, other_version):
        directory.mkdir()
        (directory / ("1" * 32 + ".json")).write_text("{}")
    (other_version / "keep.txt").write_text("not torchlint's")
    _age(old_version, 3)
    _age(other_version, 3)
    concise(".", cwd=tmp_path)
    # pruned at most once a day: the first run did it already
    assert stale.exists() and old_version.exists()
    _age(version / ".pruned", 2)
    result = concise(".", cwd=tmp_path)
    assert result.returncode == 1 and not result.stderr
    assert not stale.exists() and not old_version.exists()
    assert recent_version.exists() and pack.exists()
    assert (foreign / "abcdef.json").exists() and kept_file.read_text() == "mine"
    assert (other_version / "keep.txt").exists() and not (other_version / ("1" * 32 + ".json")).exists()


def test_the_oldest_packs_go_when_the_cache_outgrows_its_bound(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    concise(".", cwd=tmp_path)
    pack = the_pack(tmp_path)
    huge = pack.parent / ("f" * 32 + ".json")
    with open(huge, "wb") as handle:  # sparse: large st_size, no disk used
        handle.truncate(80 * 1024 * 1024)
    _age(huge, 2)
    _age(pack.parent / ".pruned", 2)
    concise(".", cwd=tmp_path)
    assert not huge.exists() and pack.exists()
