"""editors/vscode stays in step with the server and the README, without npm: the code
actions it declares are the kinds the server advertises, its settings are the README's,
its dependencies are pinned and locked, and what npm and vsce make is never committed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from cli_support import REPO

EXTENSION = REPO / "editors" / "vscode"
MANIFEST = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
SETTINGS = MANIFEST["contributes"]["configuration"]["properties"]
README = (REPO / "README.md").read_text(encoding="utf-8")
VS_CODE_SECTION = README.split("### VS Code\n")[1].split("\n### Neovim")[0]


def test_declared_code_actions_are_the_kinds_the_server_advertises():
    pytest.importorskip("lsprotocol")
    from torchlint.integrations.server import actions

    declared = {action["kind"] for entry in MANIFEST["contributes"]["codeActions"] for action in entry["actions"]}
    assert declared == {actions.QUICK_FIX, actions.FIX_ALL}
    # the kind a user puts in editor.codeActionsOnSave, as the README and the setting say
    assert f'"{actions.FIX_ALL}": "explicit"' in VS_CODE_SECTION
    assert actions.FIX_ALL in SETTINGS["torchlint.fixAll"]["markdownDescription"]


def test_activates_on_python_and_asks_for_python_files():
    assert MANIFEST["activationEvents"] == ["onLanguage:python"]
    client = (EXTENSION / "src" / "extension.js").read_text(encoding="utf-8")
    assert "documentSelector: [{ scheme: 'file', language: 'python' }]" in client
    assert (EXTENSION / MANIFEST["main"]).is_file()


def test_the_readme_table_lists_every_setting_with_its_default():
    rows = dict(re.findall(r"^\| `(torchlint\.[\w.]+)` \| `([^`]*)` \|", VS_CODE_SECTION, re.M))
    assert rows == {name: json.dumps(setting["default"]) for name, setting in SETTINGS.items()}
    extension_readme = (EXTENSION / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in extension_readme for name in SETTINGS if name != "torchlint.trace.server")


def test_the_readme_installs_the_vsix_vsce_makes():
    vsix = f"{MANIFEST['name']}-{MANIFEST['version']}.vsix"
    assert f"code --install-extension {vsix}" in VS_CODE_SECTION
    assert "npx @vscode/vsce package" in VS_CODE_SECTION
    assert '"flake8.importStrategy": "fromEnvironment"' in VS_CODE_SECTION


def test_dependencies_are_pinned_and_locked():
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    locked = lock["packages"][""]
    for group in ("dependencies", "devDependencies"):
        for name, version in MANIFEST[group].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} {version} is not pinned"
            assert locked[group][name] == version
            assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_node_modules_and_the_vsix_are_never_committed():
    ignored = (EXTENSION / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "*.vsix"} <= set(ignored)
    if shutil.which("git") and (REPO / ".git").exists():
        tracked = subprocess.run(
            ["git", "ls-files", "editors/vscode"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.split()
        assert tracked and not [path for path in tracked if "node_modules/" in path or path.endswith(".vsix")]


def test_the_client_in_node_with_stand_ins_for_vscode():
    """The client's logic without VS Code or npm: which process runs the server (the
    Python extension's interpreter, the settings), restarts, `torchlint.fixAll`."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    result = subprocess.run(
        [node, "--test", "test/server-command.test.js", "test/extension.test.js"], cwd=EXTENSION, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
