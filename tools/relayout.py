"""Move torchlint's flat modules into packages by concern and rewrite every reference.
Idempotent: run again after merging a branch written against the old names."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
MOVE = "--move" in sys.argv

MODULES = {
    # core: engine, rule API, registry, config, diagnostics, suppressions, parsing
    "rule": "core.rule",
    "registry": "core.registry",
    "engine": "core.engine",
    "config": "core.config",
    "config_files": "core.config_files",
    "ftypes": "core.diagnostics",
    "noqa": "core.noqa",
    "source": "core.source",
    "parse": "core.parse",
    "positions": "core.positions",
    "elide": "core.partial_parse",
    "statement_parse": "core.incremental_parse",
    "large_text": "core.large_files",
    "site_gate": "core.gating",
    "expression_rule": "core.bases.expression",
    "torch_api_rule": "core.bases.torch_api",
    "walk": "core.walk",
    "lazy": "core.lazy",
    # analysis: what the code means
    "ast_owners": "analysis.owners",
    "call_arguments": "analysis.call_arguments",
    "loop_reach": "analysis.loop_reach",
    "modules": "analysis.modules",
    "names": "analysis.names",
    "reach": "analysis.hot_paths",
    "second_order": "analysis.second_order",
    "step_branches": "analysis.every_step",
    "submodule_calls": "analysis.submodule_calls",
    "sync_history": "analysis.sync_history",
    "torch_calls": "analysis.torch_calls",
    "torch_load": "analysis.torch_load",
    "torch_api_table": "analysis.torch_api_table",
    "torchvision_weights": "analysis.torchvision_weights",
    # index: per-file facts for the project pass
    "file_facts": "index.file_facts",
    "project": "index.module_names",
    # fixing
    "fix": "fixing.apply",
    "fix_guard": "fixing.guard",
    "import_edits": "fixing.import_edits",
    "name_rewrites": "fixing.name_rewrites",
    "layout": "fixing.layout",
    "write": "fixing.write",
    "add_noqa": "fixing.add_noqa",
    "torch_api_rewrites": "fixing.torch_api_rewrites",
    "cudnn_off_fix": "fixing.cudnn_off",
    # run: discovery, runner, cache
    "runner": "run.runner",
    "discovery": "run.discovery",
    "cache": "run.cache",
    "cache_ground": "run.cache_ground",
    "cache_key": "run.cache_key",
    "interrupts": "run.interrupts",
    "bounded_read": "run.bounded_read",
    "baseline": "run.baseline",
    # integrations
    "flake8": "integrations.flake8",
    "notebook": "integrations.notebook",
    "server": "integrations.server",
    # report
    "console": "report.console",
    "fingerprint": "report.fingerprint",
    "rule_pages": "report.rule_pages",
}

FAMILIES = {
    "training": [
        "heavy_import_at_module_level", "unvalidated_conv_input", "host_sync_in_hot_path",
        "cudnn_rnn_double_backward", "implicit_host_sync_in_hot_path",
    ],
    "torch_api": ["removed_torch_api", "deprecated_torch_api", "non_public_torch_api"],
    "api_misuse": [
        "torch_load_without_weights_only", "checkpoint_without_use_reentrant", "requires_grad_typo",
        "torchvision_pretrained_argument", "torchvision_models_import_style", "torchvision_v2_to_tensor",
        "cudnn_disabled_globally", "cuda_env_var_set_too_late", "untrusted_torch_load",
    ],
    "numerics_and_data": [
        "log_one_plus", "exp_minus_one", "log_sum_exp", "zero_grad_set_to_none_false",
        "dataloader_without_num_workers", "pin_memory_off_with_non_blocking",
    ],
}
RULES = {name: family for family, names in FAMILIES.items() for name in names}

PACKAGES = sorted({new.split(".")[0] for new in MODULES.values() if "." in new})


def git(*arguments):
    subprocess.run(["git", *arguments], cwd=ROOT, check=True)


def move():
    for package in PACKAGES:
        directory = ROOT / "torchlint" / package
        directory.mkdir(exist_ok=True)
        init = directory / "__init__.py"
        if not init.exists():
            init.write_text("")
            git("add", str(init))
    for old, new in MODULES.items():
        source = ROOT / "torchlint" / f"{old}.py"
        if old == "server":
            source = ROOT / "torchlint" / "server"
            target = ROOT / "torchlint" / "integrations" / "server"
        else:
            target = ROOT / "torchlint" / (new.replace(".", "/") + ".py")
        if source.exists():
            git("mv", str(source.relative_to(ROOT)), str(target.relative_to(ROOT)))
    for family in FAMILIES:
        directory = ROOT / "rules" / family
        directory.mkdir(exist_ok=True)
        init = directory / "__init__.py"
        if not init.exists():
            init.write_text("")
            git("add", str(init))
    for name, family in RULES.items():
        source = ROOT / "rules" / f"{name}.py"
        if source.exists():
            git("mv", str(source.relative_to(ROOT)), f"rules/{family}/{name}.py")


OLD = "|".join(sorted(MODULES, key=len, reverse=True))
RULE_NAMES = "|".join(sorted(RULES, key=len, reverse=True))
FROM_TORCHLINT = re.compile(r"^(?P<indent>[ \t]*)from torchlint import (?P<names>[^(\n#]+?)(?P<comment>\s*#.*)?$", re.M)
DOTTED = re.compile(rf"\btorchlint\.(?P<old>{OLD})\b(?![\w(])")
RULE_DOTTED = re.compile(rf"\btorchlint\.rules\.(?P<old>{RULE_NAMES})\b")
PATH = re.compile(rf"\btorchlint/(?P<old>{OLD})(?P<tail>\.py\b|/)")
RULE_PATH = re.compile(rf"(?<![\w/])rules/(?P<old>{RULE_NAMES})\.py\b")


def rewrite_from(match):
    indent, names, comment = match["indent"], match["names"], match["comment"] or ""
    groups = {}
    for part in names.split(","):
        part = part.strip()
        if not part:
            continue
        name, _, alias = part.partition(" as ")
        name, alias = name.strip(), alias.strip()
        if name in MODULES:
            package, _, leaf = MODULES[name].rpartition(".")
            bound = alias or name
            groups.setdefault(f"torchlint.{package}", []).append(leaf if leaf == bound else f"{leaf} as {bound}")
        else:
            groups.setdefault("torchlint", []).append(part)
    lines = [f"{indent}from {module} import {', '.join(items)}" for module, items in groups.items()]
    lines[0] += comment
    return "\n".join(lines)


def rewrite(text: str) -> str:
    text = FROM_TORCHLINT.sub(rewrite_from, text)
    text = RULE_DOTTED.sub(lambda m: f"torchlint.rules.{RULES[m['old']]}.{m['old']}", text)
    text = DOTTED.sub(lambda m: f"torchlint.{MODULES[m['old']]}", text)
    text = PATH.sub(lambda m: "torchlint/" + MODULES[m["old"]].replace(".", "/") + m["tail"], text)
    text = RULE_PATH.sub(lambda m: f"rules/{RULES[m['old']]}/{m['old']}.py", text)
    return text


def main():
    if MOVE:
        move()
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    changed = 0
    for name in files:
        if name.startswith(("fixtures/", "tests/explain/real/")) or not name.endswith(
            (".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".txt", "run", ".ini")
        ):
            continue
        path = ROOT / name
        if not path.is_file():
            continue
        text = path.read_text()
        new = rewrite(text)
        if new != text:
            path.write_text(new)
            changed += 1
    print(f"rewrote {changed} files")


main()
