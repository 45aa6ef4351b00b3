"""End to end: the wheel in a fresh venv, and the real pre-commit against this repository.
Both install from pip's package index, and skip, saying why, when it cannot be reached."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from cli_support import FIXTURES, REPO
from package_index import index_unreachable, require_package_index
from torchlint.rule_api.registry import all_rules

pytestmark = pytest.mark.slow

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"


def run(*args, cwd=None, env=None, check=True):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=900)
    if check and result.returncode != 0:
        raise AssertionError(f"{args} failed:\n{result.stdout.decode()}\n{result.stderr.decode()}")
    return result


def test_wheel_in_a_fresh_venv_lints_the_fixtures(tmp_path):
    require_package_index()
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "build", "dist", ".torchlint_cache", "__pycache__"))
    run(sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(source))
    wheel = next((tmp_path / "dist").glob("torchlint-*.whl"))
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    run(str(python), "-m", "pip", "install", "-q", str(wheel))
    listing = run(str(python), "-m", "pip", "show", "-f", "torchlint").stdout.decode()
    assert "torchlint/rules/training/" in listing
    count = "from torchlint.rule_api.registry import all_rules; print(len(all_rules()))"
    assert run(str(python), "-c", count).stdout.decode().strip() == str(len(all_rules()))
    result = run(str(venv / "bin" / "torchlint"), "check", "--no-cache", "--output-format", "json", str(FIXTURES / "trainer"), check=False)
    assert result.returncode == 1, result.stderr.decode()
    assert {item["code"] for item in json.loads(result.stdout)} >= {"TL001"}
    no_torch = run(str(python), "-c", "import importlib.util; print(importlib.util.find_spec('torch'))")
    assert no_torch.stdout.decode().strip() == "None"


def git_project(tmp_path):
    """A git repository holding `train.py` (BAD), and the environment pre-commit runs in."""
    repo = tmp_path / "project"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    run("git", "init", "-q", cwd=repo)
    run("git", "config", "user.email", "t@example.com", cwd=repo)
    run("git", "config", "user.name", "t", cwd=repo)
    (repo / "train.py").write_text(BAD)
    return repo, env


def test_pre_commit_try_repo_fails_then_fixes_then_passes(tmp_path):
    require_package_index()
    repo, env = git_project(tmp_path)
    run("git", "add", "train.py", cwd=repo)
    pre_commit = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO)]
    check = run(*pre_commit, "torchlint", "--all-files", cwd=repo, env=env, check=False)
    assert check.returncode == 1, check.stdout.decode()
    assert "TL001" in check.stdout.decode()
    fix = run(*pre_commit, "torchlint-fix", "--all-files", cwd=repo, env=env, check=False)
    assert fix.returncode == 1, fix.stdout.decode()
    assert (repo / "train.py").read_text() == "def train():\n    import wandb\n\n    wandb.init()\n"
    run("git", "add", "train.py", cwd=repo)
    again = run(*pre_commit, "torchlint", "--all-files", cwd=repo, env=env, check=False)
    assert again.returncode == 0, again.stdout.decode()


def test_an_unreachable_index_skips_the_install_tests_with_the_reason():
    # no pip configuration at all, and an index on a port where nothing listens
    env = {name: value for name, value in os.environ.items() if not name.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_NO_CACHE_DIR="1")
    assert index_unreachable(env).startswith("the package index cannot be reached: ")
    test = "tests/test_packaging.py::test_wheel_in_a_fresh_venv_lints_the_fixtures"
    result = run(sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test, cwd=REPO, env=env, check=False)
    out = result.stdout.decode()
    assert result.returncode == 0 and "1 skipped" in out, out
    assert "the package index cannot be reached" in out


def test_readme_pre_commit_config_works_and_autoupdate_pins_a_commit(tmp_path):
    require_package_index()
    from torchlint.core.diagnostics import REPOSITORY_URL

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## pre-commit\n")[1].split("\n## ")[0]
    config = re.search(r"```yaml\n(.*?\n)```", section, re.S).group(1)
    upstream = tmp_path / "upstream"  # stands in for the repository at REPOSITORY_URL
    run("git", "clone", "-q", "--branch", "main", str(REPO), str(upstream))
    repo = tmp_path / "project"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    run("git", "init", "-q", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(config.replace(REPOSITORY_URL, str(upstream)))
    (repo / "train.py").write_text(BAD)
    run("git", "add", ".", cwd=repo)
    run(sys.executable, "-m", "pre_commit", "autoupdate", "--freeze", cwd=repo, env=env)
    revs = re.findall(r"^\s+rev: (\S+)", (repo / ".pre-commit-config.yaml").read_text(), re.M)
    head = run("git", "rev-parse", "HEAD", cwd=upstream).stdout.decode().strip()
    assert revs == [head]
    hook = run(sys.executable, "-m", "pre_commit", "run", "--all-files", cwd=repo, env=env, check=False)
    assert hook.returncode == 1 and "TL001" in hook.stdout.decode(), hook.stdout.decode()
