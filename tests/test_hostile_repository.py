"""A repository under review, or a pasted log, cannot turn torchlint against its user.

Each case plays the attack of issue 20 inside a temporary directory: the repository is
the attacker's, the clone the victim's; no path outside `tmp_path` is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_torchlint, write_tree
from torchlint import __version__
from torchlint.run.cache_key import signed

PAYLOAD = 'import os; os.system("touch PWNED")\n'
DAY = 86400
LOAD = "import torch\n\n\ndef restore(path):\n    return torch.load(path)\n"


def concise(*args, cwd, env=None):
    return run_torchlint("check", "--output-format", "concise", *args, cwd=cwd, env=env)


def _user(tmp_path: Path, name: str) -> dict:
    """The environment of a user whose cache key lives in their own ~/.cache."""
    home = tmp_path / "home" / name
    home.mkdir(parents=True, exist_ok=True)
    return {"XDG_CACHE_HOME": str(home / ".cache")}


def _doctor(value):
    """Every fix edit writes the payload; every list of findings is emptied."""
    if isinstance(value, dict):
        if "edits" in value and isinstance(value["edits"], list):
            for edit in value["edits"]:
                edit["content"] = PAYLOAD
        for key, item in value.items():
            if key == "diagnostics" and isinstance(item, list) and not any("edits" in json.dumps(d) for d in item):
                value[key] = []
            else:
                _doctor(item)
    elif isinstance(value, list):
        for item in value:
            _doctor(item)
    return value


def _doctor_cache(repository: Path, resign_with: Path = None, erase_facts: bool = False) -> int:
    """Doctor the committed cache as the attacker would; returns how many packs changed."""
    from torchlint.run.cache_key import _key_at

    changed = 0
    for pack in (repository / ".torchlint_cache").glob("v*/*"):
        if pack.name.startswith("."):
            continue
        raw = pack.read_bytes()
        body = raw.partition(b"\n")[2] if b"\n" in raw[:80] else raw
        data = json.loads(body)
        # facts are JSON texts inside JSON: doctor those too
        for entry in data.get("files", {}).values():
            facts = entry.get("facts") if isinstance(entry, dict) else None
            if isinstance(facts, dict) and erase_facts:
                facts.clear()
            if isinstance(facts, dict):
                for code, text in facts.items():
                    facts[code] = json.dumps(_doctor(json.loads(text)))
        body = json.dumps(_doctor(data)).encode()
        if resign_with is not None:
            body = signed(_key_at(resign_with / "torchlint" / "cache-key"), pack.name, body)
        pack.write_bytes(body)
        changed += 1
    return changed


@pytest.fixture
def repository(tmp_path):
    """The attacker's repository: the fixtures plus a file with a torch.load, linted once."""
    repository = tmp_path / "attacker"
    shutil.copytree(FIXTURES, repository)
    (repository / "load.py").write_text(LOAD)
    return repository


@pytest.fixture
def clone(tmp_path) -> Path:
    """A clone with a file to report and an empty `.torchlint_cache` the repository made."""
    clone = tmp_path / "clone"
    (clone / ".torchlint_cache").mkdir(parents=True)
    (clone / "load.py").write_text(LOAD)
    return clone


@pytest.mark.parametrize("signature", ["unsigned", "attacker's key"])
def test_a_committed_cache_neither_hides_findings_nor_writes_code(tmp_path, repository, signature):
    attacker = _user(tmp_path, "attacker")
    assert concise(".", cwd=repository, env=attacker).returncode == 1
    resign = Path(attacker["XDG_CACHE_HOME"]) if signature != "unsigned" else None
    assert _doctor_cache(repository, resign) > 0
    clone = tmp_path / "victim"
    shutil.copytree(repository, clone)  # the clone carries the committed cache
    victim = _user(tmp_path, "victim")
    honest = concise(".", "--no-cache", cwd=clone, env=victim)
    assert b"load.py:5:12: TL201" in honest.stdout
    cached = concise(".", cwd=clone, env=victim)
    assert (cached.returncode, cached.stdout) == (honest.returncode, honest.stdout)
    # a safe --fix writes what the rules compute now, never the payload
    reference = tmp_path / "reference"
    shutil.copytree(FIXTURES, reference)
    (reference / "load.py").write_text(LOAD)
    concise(".", "--fix", "--no-cache", cwd=reference, env=victim)
    concise(".", "--fix", cwd=clone, env=victim)
    for path in reference.rglob("*.py"):
        fixed = (clone / path.relative_to(reference)).read_text()
        assert PAYLOAD not in fixed and fixed == path.read_text(), path
    assert not list(clone.rglob("PWNED"))


def test_the_victims_own_cache_still_hits(tmp_path, repository):
    victim = _user(tmp_path, "victim")
    cold = concise(".", cwd=repository, env=victim)
    packs = sorted((repository / ".torchlint_cache").glob(f"v{__version__}/*.json"))
    stamps = [pack.stat().st_mtime_ns for pack in packs]
    warm = concise(".", cwd=repository, env=victim)
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
    assert [pack.stat().st_mtime_ns for pack in packs] == stamps  # read, not rewritten


def _old_tree(root: Path) -> list:
    """Directories and files a pruning through a link would delete (all older than a day)."""
    write_tree(root, {"project/src/model.py": "x = 1\n", "notes.txt": "mine\n", "v9/keep.json": "{}"})
    then = time.time() - 40 * DAY
    paths = sorted(root.rglob("*"))
    for path in paths:
        os.utime(path, (then, then), follow_symlinks=False)
    return paths


@pytest.mark.parametrize("link", [f"v{__version__}", "the cache itself"])
def test_a_symlinked_cache_directory_deletes_nothing(tmp_path, link):
    others = tmp_path / "others"
    before = _old_tree(others)
    clone = tmp_path / "clone"
    (clone / "pkg").mkdir(parents=True)
    (clone / "pkg" / "load.py").write_text(LOAD)
    cache = clone / ".torchlint_cache"
    if link == "the cache itself":
        cache.symlink_to(others, target_is_directory=True)
    else:
        cache.mkdir()
        (cache / f"v{__version__}").symlink_to(os.path.relpath(others, cache), target_is_directory=True)
    result = concise(".", cwd=clone, env=_user(tmp_path, "victim"))
    assert result.returncode == 1 and b"TL201" in result.stdout
    assert b"warning: cache not used" in result.stderr and b"symbolic link" in result.stderr
    assert sorted(others.rglob("*")) == before
    assert (others / "notes.txt").read_text() == "mine\n"


def test_a_symlinked_gitignore_in_the_cache_is_replaced_not_written_through(tmp_path, clone):
    secret = tmp_path / "home" / "authorized_keys"
    secret.parent.mkdir(parents=True)
    secret.write_text("ssh-ed25519 AAAA user@host\n")
    cache = clone / ".torchlint_cache"
    (cache / ".gitignore").symlink_to(secret)
    (cache / "CACHEDIR.TAG").symlink_to(secret)
    result = concise(".", cwd=clone, env=_user(tmp_path, "victim"))
    assert result.returncode == 1
    assert secret.read_text() == "ssh-ed25519 AAAA user@host\n"
    assert not (cache / ".gitignore").is_symlink() and (cache / ".gitignore").read_text() == "*\n"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_packs_that_are_links_are_never_followed(tmp_path, clone):
    victim = _user(tmp_path, "victim")
    first = concise(".", cwd=clone, env=victim)
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me\n")
    for pack in (clone / ".torchlint_cache").glob("v*/*.json"):
        pack.unlink()
        pack.symlink_to(secret)
    again = concise(".", cwd=clone, env=victim)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert secret.read_text() == "keep me\n"


def test_the_cache_repairs_an_empty_tag_left_by_a_full_disk(tmp_path, clone):
    cache = clone / ".torchlint_cache"
    (cache / "CACHEDIR.TAG").write_text("")
    concise(".", cwd=clone, env=_user(tmp_path, "victim"))
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text() == "*\n"


needs_root = pytest.mark.skipif(os.getuid() != 0, reason="planting another user's files needs root (chown)")
OTHER_UID = 4242


@needs_root
def test_a_cache_directory_of_another_user_is_refused(tmp_path, clone):
    cache = clone / ".torchlint_cache"
    os.chown(cache, OTHER_UID, OTHER_UID)
    result = concise(".", cwd=clone, env=_user(tmp_path, "victim"))
    assert result.returncode == 1 and b"TL201" in result.stdout
    assert b"belongs to another user" in result.stderr
    assert list(cache.iterdir()) == []


@needs_root
@pytest.mark.parametrize("shared", ["sticky", "another user's"])
def test_a_config_planted_above_the_project_by_another_user_is_not_used(tmp_path, shared):
    top = tmp_path / "shared"
    top.mkdir()
    if shared == "sticky":
        top.chmod(0o1777)
    else:
        os.chown(top, OTHER_UID, OTHER_UID)
    planted = top / "torchlint.toml"
    planted.write_text('ignore = ["TL2"]\n')  # would hide the torch.load finding
    os.chown(planted, OTHER_UID, OTHER_UID)
    others = top / "others"
    before = _old_tree(others)
    cache = top / ".torchlint_cache"
    cache.mkdir()
    (cache / f"v{__version__}").symlink_to("../others", target_is_directory=True)
    os.lchown(cache, OTHER_UID, OTHER_UID)
    project = top / "project"
    project.mkdir()
    (project / "load.py").write_text(LOAD)
    result = concise(".", cwd=project, env=_user(tmp_path, "victim"))
    assert result.returncode == 1 and b"load.py:5:12: TL201" in result.stdout
    assert b"torchlint.toml: not used: another user can write it" in result.stderr
    assert sorted(others.rglob("*")) == before
    assert (project / ".torchlint_cache").is_dir()  # the project's own cache instead


def test_a_config_of_this_user_above_the_project_is_used(tmp_path):
    write_tree(tmp_path / "work", {"torchlint.toml": 'ignore = ["TL201"]\n', "project/load.py": LOAD})
    result = concise(".", cwd=tmp_path / "work" / "project", env=_user(tmp_path, "victim"))
    assert (result.returncode, result.stderr) == (0, b"")


# ---- pasted text reaches the terminal escaped --------------------------------------

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b31m"


def test_explain_shows_escape_sequences_from_a_pasted_log_escaped(tmp_path):
    log = tmp_path / "crash.log"
    log.write_text(f"RuntimeError: CUDA error: device-side assert triggered {ESCAPES}\n", encoding="utf-8")
    text = run_torchlint("explain", str(log))
    assert text.returncode == 0, text.stderr
    shown = text.stdout.decode()
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\\x1b]0;owned\\x07" in shown
    exact = run_torchlint("explain", "--format", "json", str(log))
    assert ESCAPES in json.loads(exact.stdout)["matches"][0]["excerpt"]


def test_doctor_shows_escape_sequences_from_pasted_facts_escaped(tmp_path):
    source = (Path(__file__).parent / "doctor" / "facts" / "collect-env-h100-healthy.txt").read_text()
    facts = tmp_path / "env.txt"
    facts.write_text(source.replace("NVIDIA H100 80GB HBM3", f"NVIDIA H100 [bold]{ESCAPES}"), encoding="utf-8")
    result = run_torchlint("doctor", "--facts", str(facts))
    shown = result.stdout.decode() + result.stderr.decode()
    assert "Traceback" not in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\\x1b" in shown and "[bold]" in shown


def test_check_shows_control_characters_of_file_names_and_messages_escaped(tmp_path):
    name = "evil\x1b[2J.py"
    (tmp_path / name).write_text(LOAD)
    result = concise(".", cwd=tmp_path, env=_user(tmp_path, "victim"))
    assert result.returncode == 1
    assert b"\x1b" not in result.stdout and b"evil\\x1b[2J.py:5:12: TL201" in result.stdout
    exact = run_torchlint("check", "--output-format", "json", "--no-cache", ".", cwd=tmp_path)
    assert json.loads(exact.stdout)[0]["filename"].endswith(name)


@pytest.mark.slow
def test_the_language_server_ignores_a_doctored_cache(tmp_path):
    from lsp_support import Session, run
    from test_tl004_cudnn_rnn_double_backward import GRU_MODEL, penalty

    clone = write_tree(tmp_path / "clone", {
        "src/pkg/__init__.py": "", "src/pkg/models.py": GRU_MODEL,
        "train.py": penalty("from pkg.models import Critic"),
    })
    attacker = _user(tmp_path, "attacker")
    assert b"TL004" in concise(".", cwd=clone, env=attacker).stdout
    assert _doctor_cache(clone, erase_facts=True) > 0  # as the committed cache of an older release would be

    async def scenario():
        async with Session(clone) as session:
            models = session.uri("src/pkg/models.py")
            session.open("train.py")
            return await session.diagnostics(models, until=lambda found: bool(found))

    found = run(scenario())
    assert [(d.code, d.range.start.line + 1) for d in found] == [("TL004", 8)]


def test_a_symlink_out_of_the_project_is_neither_read_nor_fixed(tmp_path):
    from cli_support import WANDB_USED

    elsewhere = tmp_path / "home" / "other_project" / "train.py"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text(WANDB_USED)
    clone = tmp_path / "clone"
    (clone / "src").mkdir(parents=True)
    (clone / "src" / "train.py").symlink_to(elsewhere)
    (clone / "src" / "inside.py").symlink_to(clone / "src" / "real.py")
    (clone / "src" / "real.py").write_text(WANDB_USED)
    result = concise("--fix", "src", cwd=clone, env=_user(tmp_path, "victim"))
    assert elsewhere.read_text() == WANDB_USED
    assert b"src/train.py: a symbolic link out of the project; skipped" in result.stderr
    assert (clone / "src" / "real.py").read_text() != WANDB_USED  # a link inside is linted and fixed
    # a file named on the command line is the user's choice, as in ruff
    named = concise("src/train.py", cwd=clone, env=_user(tmp_path, "victim"))
    assert named.returncode == 1 and b"TL001" in named.stdout


# ---- the cache key lives out of the repository's reach ------------------------------


def _plant_key(repository: Path, tmp_path: Path, where: str) -> None:
    """The attacker lints with their own key, signs doctored packs with it and commits the
    key where a victim's misconfigured environment would look for theirs (umask 077)."""
    attacker = _user(tmp_path, "attacker")
    assert concise(".", cwd=repository, env=attacker).returncode == 1
    assert _doctor_cache(repository, Path(attacker["XDG_CACHE_HOME"])) > 0
    key = repository / where / "torchlint" / "cache-key"
    key.parent.mkdir(parents=True)
    shutil.copy(Path(attacker["XDG_CACHE_HOME"]) / "torchlint" / "cache-key", key)
    key.chmod(0o600)
    key.parent.chmod(0o700)


KEY_PLACES = {  # where the key is planted -> the victim's environment, relative to the clone
    "XDG_CACHE_HOME in the checkout": (".cache", lambda clone: {"XDG_CACHE_HOME": str(clone / ".cache")}),
    "relative XDG_CACHE_HOME": ("xdg", lambda clone: {"XDG_CACHE_HOME": "xdg"}),
    "HOME unset, no passwd entry (~)": ("~/.cache", lambda clone: {"XDG_CACHE_HOME": None, "HOME": "~"}),
}


@pytest.mark.parametrize("place", KEY_PLACES)
def test_a_cache_key_committed_to_the_repository_is_never_used(tmp_path, repository, place):
    where, environment = KEY_PLACES[place]
    _plant_key(repository, tmp_path, where)
    clone = tmp_path / "victim"
    shutil.copytree(repository, clone)
    packs = {pack: pack.read_bytes() for pack in (clone / ".torchlint_cache").rglob("*") if pack.is_file()}
    honest = concise(".", "--no-cache", cwd=clone, env=_user(tmp_path, "victim"))
    assert b"load.py:5:12: TL201" in honest.stdout
    victim = environment(clone)
    cached = concise(".", cwd=clone, env=victim)
    assert (cached.returncode, cached.stdout) == (honest.returncode, honest.stdout)
    assert cached.stderr.count(b"warning: cache not used: ") == 1, cached.stderr
    assert b"not an absolute path" in cached.stderr or b"lies inside the project" in cached.stderr
    concise(".", "--fix", cwd=clone, env=victim)
    assert not any(PAYLOAD in path.read_text() for path in clone.rglob("*.py"))
    assert {pack: pack.read_bytes() for pack in packs} == packs  # nothing cached either


def test_an_empty_home_puts_no_key_at_the_file_systems_root(tmp_path, clone):
    # HOME="" would mean `/`: the key would land in /.cache/torchlint, outside every home.
    at_root = Path("/.cache/torchlint")
    there_before = at_root.exists()
    result = concise(".", cwd=clone, env={"XDG_CACHE_HOME": None, "HOME": ""})
    made = at_root.exists() and not there_before
    if made:  # a regression made it: leave the machine as it was, then fail
        shutil.rmtree(at_root)
    assert not made
    assert result.returncode == 1 and b"TL201" in result.stdout
    assert result.stderr.count(b"warning: cache not used: ") == 1
    assert b"HOME (empty) is not an absolute path" in result.stderr

def test_a_fifo_at_the_key_path_is_refused_without_waiting(tmp_path, clone):
    from cli_support import run_torchlint_process

    victim = _user(tmp_path, "victim")
    key = Path(victim["XDG_CACHE_HOME"]) / "torchlint" / "cache-key"
    key.parent.mkdir(parents=True, mode=0o700)
    os.mkfifo(key, 0o600)
    started = time.monotonic()
    result = run_torchlint_process("check", "--output-format", "concise", ".", cwd=clone, env=victim, timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 1 and b"TL201" in result.stdout
    assert b"warning: cache not used: " in result.stderr and b"not a private file" in result.stderr


def test_a_key_directory_others_can_write_is_refused(tmp_path, clone):
    victim = _user(tmp_path, "victim")
    assert concise(".", cwd=clone, env=victim).returncode == 1
    directory = Path(victim["XDG_CACHE_HOME"]) / "torchlint"
    directory.chmod(0o777)  # anyone could swap the key
    shutil.rmtree(clone / ".torchlint_cache")
    result = concise(".", cwd=clone, env=victim)
    assert result.returncode == 1 and b"TL201" in result.stdout
    assert b"warning: cache not used: " in result.stderr and b"can be written by other users" in result.stderr
    assert not (clone / ".torchlint_cache").exists()


def test_a_full_disk_leaves_no_temporary_key_behind(tmp_path, clone):
    from cli_support import run_torchlint_process

    prlimit = shutil.which("prlimit")
    if prlimit is None:
        pytest.skip("prlimit (util-linux) is needed to make every write fail as on a full disk")
    victim = _user(tmp_path, "victim")
    result = run_torchlint_process("check", "--output-format", "concise", ".", cwd=clone, env=victim,
                                   prefix=(prlimit, "--fsize=0", "--"))
    assert result.returncode == 1 and b"TL201" in result.stdout
    assert b"warning: cache not used: " in result.stderr
    assert list((Path(victim["XDG_CACHE_HOME"]) / "torchlint").iterdir()) == []


@pytest.mark.parametrize("damage", ["emptied", "deleted"])
def test_the_cache_tag_and_gitignore_are_repaired_on_every_run(tmp_path, clone, damage):
    victim = _user(tmp_path, "victim")
    concise(".", cwd=clone, env=victim)
    cache = clone / ".torchlint_cache"
    assert (cache / f"v{__version__}").is_dir()
    for name in ("CACHEDIR.TAG", ".gitignore"):
        if damage == "emptied":
            (cache / name).write_text("")
        else:
            (cache / name).unlink()
    concise(".", cwd=clone, env=victim)  # a warm run: nothing else to write
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text() == "*\n"
