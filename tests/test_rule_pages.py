"""Every rule has a page (docs/rules/TL001.md) generated from its class, the pages and
README.md's rules table are never stale, and the `url` in JSON and SARIF leads to them."""

from __future__ import annotations

import json
import shutil

import pytest

from cli_support import FIXTURES, REPO, run_module, run_torchlint
from torchlint.core.diagnostics import REPOSITORY_URL, RULE_PAGES_DIR
from torchlint.rule_api.registry import rule_infos
from torchlint.report.rule_pages import generated_files, stale_pages

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

REGENERATE = "run `python -m torchlint.report.rule_pages` and commit the result"


def test_pages_and_readme_table_are_generated_from_the_rules():
    stale = [
        str(path.relative_to(REPO))
        for path, text in generated_files(REPO).items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale or missing: {stale}; {REGENERATE}"


def test_no_page_for_a_rule_that_does_not_exist():
    assert not stale_pages(REPO), REGENERATE


def test_every_rule_has_a_page_with_ruffs_headings():
    for code, info in rule_infos().items():
        page = (REPO / RULE_PAGES_DIR / f"{code}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {code}: {info.name}\n")
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert heading in page, (code, heading)


def _page_of(url: str):
    prefix = f"{REPOSITORY_URL}/blob/main/"
    assert url.startswith(prefix), url
    return REPO / url[len(prefix):]


def test_json_and_sarif_urls_lead_to_the_rule_pages():
    json_out = run_torchlint("check", "--no-cache", "--output-format", "json", str(FIXTURES))
    findings = json.loads(json_out.stdout)
    assert findings, json_out.stderr.decode()
    for item in findings:
        assert _page_of(item["url"]) == REPO / RULE_PAGES_DIR / f"{item['code']}.md"
        assert _page_of(item["url"]).is_file()
    sarif = json.loads(run_torchlint("check", "--no-cache", "--output-format", "sarif", str(FIXTURES)).stdout)
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert _page_of(rule["helpUri"]).read_text(encoding="utf-8").startswith(f"# {rule['id']}: ")


def test_rule_json_url_is_the_page():
    result = run_torchlint("rule", "TL001", "--output-format", "json")
    assert _page_of(json.loads(result.stdout)["url"]).name == "TL001.md"


def test_repository_url_is_the_one_in_pyproject():
    urls = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Repository"] == REPOSITORY_URL


def test_readme_table_links_every_code_to_its_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for code in rule_infos():
        assert f"| [{code}]({RULE_PAGES_DIR}/{code}.md) |" in readme


@pytest.fixture
def repo_copy(tmp_path):
    target = tmp_path / "repo"
    (target / RULE_PAGES_DIR).mkdir(parents=True)
    shutil.copy(REPO / "README.md", target / "README.md")
    return target


def test_generator_writes_missing_pages_and_the_table_and_removes_orphans(repo_copy):
    readme = repo_copy / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("[TL001](docs/rules/TL001.md)", "TL001"))
    orphan = repo_copy / RULE_PAGES_DIR / "TL999.md"
    orphan.write_text("# TL999: gone\n")
    result = run_module("torchlint.report.rule_pages", str(repo_copy))
    assert result.returncode == 0, result.stderr.decode()
    assert not orphan.exists()
    for path, text in generated_files(repo_copy).items():
        assert path.read_text(encoding="utf-8") == text
    assert readme.read_text(encoding="utf-8") == (REPO / "README.md").read_text(encoding="utf-8")


def test_generator_outside_a_repository_is_one_line_and_exit_2(tmp_path):
    result = run_module("torchlint.report.rule_pages", str(tmp_path))
    assert result.returncode == 2
    assert len(result.stderr.decode().splitlines()) == 1 and result.stderr.startswith(b"error: ")
