"""The VS Code extension end to end in a real VS Code (slow): editors/vscode/test/e2e.js
installs the .vsix into code-server, drives it from a headless Chromium, shows TL001,
applies its quick fix and a fix all on save, and none with `torchlint.fixAll` off.

Needs what CI does not have, so it is skipped without it: node, `npm ci` run in
editors/vscode (vsce, playwright-core), a Chromium (Debian's `chromium`, or
TORCHLINT_CHROMIUM) and code-server from npm (`npm install code-server@4.100.3`, whose
`code-server` is found on PATH or named by TORCHLINT_CODE_SERVER). Screenshots go to
TORCHLINT_E2E_SCREENSHOTS, else the test's temporary directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import REPO

EXTENSION = REPO / "editors" / "vscode"


def _needed() -> dict:
    found = {
        "node": shutil.which("node"),
        "chromium": os.environ.get("TORCHLINT_CHROMIUM") or shutil.which("chromium"),
        "code-server": os.environ.get("TORCHLINT_CODE_SERVER") or shutil.which("code-server"),
        "editors/vscode/node_modules (npm ci)": all(
            (EXTENSION / "node_modules" / name / "package.json").is_file() for name in ("@vscode/vsce", "playwright-core")
        ),
        "pygls (the server extra)": _importable("pygls"),
    }
    missing = [name for name, there in found.items() if not there]
    if missing:
        pytest.skip(f"a real VS Code cannot run here: no {', '.join(missing)}")
    return found


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@pytest.mark.slow
def test_code_server_shows_the_finding_and_applies_its_fixes(tmp_path):
    found = _needed()
    vsix = tmp_path / "torchlint.vsix"
    package = subprocess.run(
        [found["node"], "node_modules/@vscode/vsce/vsce", "package", "--out", str(vsix)],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert package.returncode == 0, package.stdout + package.stderr
    screenshots = Path(os.environ.get("TORCHLINT_E2E_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    e2e = subprocess.run(
        [
            found["node"], "test/e2e.js",
            "--vsix", str(vsix),
            "--code-server", found["code-server"],
            "--chromium", found["chromium"],
            "--python", sys.executable,
            "--screenshots", str(screenshots),
        ],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert e2e.returncode == 0, e2e.stdout + e2e.stderr
    assert "e2e: passed" in e2e.stdout
