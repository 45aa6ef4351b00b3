"""Settings: `[tool.torchlint]` in the nearest pyproject.toml (or torchlint.toml), then flags.

The configuration is one frozen dataclass built in one pass. Anything the file gets
wrong raises `ConfigError` with a one-line message that names the file and the key.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

from torchlint.core.config_files import (
    ConfigError,
    find_config_file,
    is_file,
    read_ini,
    read_table,
    read_toml,
    trusted_above,
    trusted_files_up,
)
from torchlint.core.console import did_you_mean, warning

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".torchlint_cache",
    ".tox",
    ".venv",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

# the keys of [tool.torchlint] besides the rules' option tables
KEYS = (
    "select", "extend-select", "ignore", "per-file-ignores", "exclude", "extend-exclude",
    "extend-include", "fix", "unsafe-fixes", "line-length", "target-torch", "baseline", "runtime",
    "fixable", "unfixable", "extend",
)

# keys of [tool.torchlint] that are now options of one rule: still read, with a warning
MOVED_KEYS = {
    "lazy-imports": ("heavy-import-at-module-level", "lazy-imports"),
    "extend-lazy-imports": ("heavy-import-at-module-level", "extend-lazy-imports"),
}

DEFAULT_LINE_LENGTH = 88  # ruff's and black's

# The oldest torch release still in common use: 2.2 is the last release with wheels for
# Intel Macs (x86_64 macOS), so projects that support those machines stay on it.
DEFAULT_TARGET_TORCH = "2.2"

@dataclass(frozen=True)
class Config:
    """The effective settings of one run."""

    root: Path = field(default_factory=Path.cwd)
    source: Optional[Path] = None
    select: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    extend_include: Tuple[str, ...] = ()  # more files to find in directories (`*.ipynb`)
    fix: bool = False
    unsafe_fixes: bool = False
    rule_options: Tuple[Tuple[str, Tuple[Tuple[str, Any], ...]], ...] = ()
    line_length: int = DEFAULT_LINE_LENGTH  # the width fixes wrap the code they write to
    baseline: Optional[Path] = None
    target_torch: str = DEFAULT_TARGET_TORCH  # the oldest torch the project supports
    fixable: Tuple[str, ...] = ()  # the rules whose fixes --fix applies (none given: every rule)
    unfixable: Tuple[str, ...] = ()  # ... less these

    def may_fix(self, code: str) -> bool:
        """Whether --fix may apply the fixes of rule `code` (`fixable` / `unfixable`, as ruff)."""
        def matches(selectors: Tuple[str, ...]) -> bool:
            return any(selector in ("ALL", "TL") or code.startswith(selector) for selector in selectors)

        return (not self.fixable or matches(self.fixable)) and not matches(self.unfixable)

    def options_for(self, rule_name: str) -> Dict[str, Any]:
        return dict(dict(self.rule_options).get(rule_name, ()))

    def fingerprint(self) -> str:
        """What of this config can change a file's findings (for the cache key)."""
        return repr(
            (
                self.select,
                self.extend_select,
                self.ignore,
                self.per_file_ignores,
                self.rule_options,
                self.line_length,
                self.target_torch,
                self.fixable,
                self.unfixable,
            )
        )

    def targets_at_least(self, version: str) -> bool:
        """Whether every torch the project supports is `version` or newer."""
        from packaging.version import Version

        return Version(self.target_torch) >= Version(version)


def _string_list(path: Path, key: str, value: Any) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return tuple(value)


def _bool(path: Path, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: `{key}` must be true or false")
    return value


def _codes(path: Path, key: str, value: Any, known: Collection[str]) -> Tuple[str, ...]:
    codes = _string_list(path, key, value)
    for code in codes:
        problem = selector_problem(code, known)
        if problem:
            raise ConfigError(f"{path}: `{key}` has {code!r}, which {problem}")
    return tuple(code.upper() for code in codes)


def selector_problem(text: str, known: Collection[str]) -> Optional[str]:
    """Why `text` cannot select any of the `known` codes (None when it selects some): a
    selector that matches no rule would silently turn a check off."""
    text = text.upper()
    if not (text in ("ALL", "TL") or (text.startswith("TL") and len(text) <= 5 and text[2:].isdigit())):
        return "is not a rule code or prefix (e.g. TL001, TL0, TL or ALL)"
    if text != "ALL" and not any(code.startswith(text) for code in known):
        return "matches no rule (`torchlint rule --all` lists them)"
    return None


def _per_file_ignores(path: Path, key: str, value: Any, known: Collection[str]) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `{key}` must be a table of glob = [codes]")
    glob_patterns(path, key, tuple(value))
    return tuple((pattern, _codes(path, f"{key}.{pattern}", codes, known)) for pattern, codes in value.items())


def glob_patterns(source: Any, key: str, patterns: Tuple[str, ...]) -> Tuple[str, ...]:
    """`patterns`, if each is a valid gitignore-style glob; else a ConfigError naming
    `source` (a file or a flag) and `key`."""
    import pathspec

    for pattern in patterns:
        try:
            compiled = pathspec.GitIgnoreSpec.from_lines([pattern]).patterns
            # pathspec compiles what git cannot match (an unclosed `[`) to "no pattern"
            valid = pattern.strip() == "" or pattern.startswith("#") or compiled[0].regex is not None
            reason = "it can never match"
        except re.error as error:
            valid, reason = False, error.msg
        except ValueError as error:
            valid, reason = False, str(error)
        if not valid:
            raise ConfigError(f"{source}: `{key}` has an invalid glob {pattern!r} ({reason})")
    return patterns


def _line_length(path: Path, key: str, value: Any) -> int:
    if type(value) is not int or not 1 <= value <= 320:
        raise ConfigError(f"{path}: `{key}` must be an integer from 1 to 320")
    return value


def _target_torch(path: Path, key: str, value: Any) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        version = Version(value) if isinstance(value, str) else None
    except InvalidVersion:
        version = None
    if version is None or len(version.release) < 2 or version.pre or version.local:
        raise ConfigError(f'{path}: `{key}` must be a torch release such as "2.4"')
    return value


def declared_target_torch(directory: Path) -> Optional[str]:
    """The oldest torch the project declares, as ruff reads `requires-python`: the lower bound
    of `torch` in the `[project] dependencies` of the nearest pyproject.toml that has a
    `[project]` table, as "major.minor"; None without one (or without a bound). Cost: the
    pyproject.toml files up the tree until one has a `[project]` table."""
    for candidate in trusted_files_up(directory, ("pyproject.toml",)):
        try:
            project = read_toml(candidate).get("project")
        except ConfigError:
            return None  # reported where the file is read as the config, if it is
        if isinstance(project, dict):
            dependencies = project.get("dependencies")
            return _torch_lower_bound(dependencies) if isinstance(dependencies, list) else None
    return None


def _torch_lower_bound(dependencies: List[Any]) -> Optional[str]:
    """The oldest torch release the requirements admit ("1.10" for `torch>=1.10,<1.14`); of
    several `torch` entries (one per platform marker), the oldest."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    oldest: Optional[Version] = None
    for entry in dependencies:
        try:
            requirement = Requirement(entry) if isinstance(entry, str) else None
        except InvalidRequirement:
            continue
        if requirement is None or requirement.name.lower() != "torch":
            continue
        bounds = []
        for specifier in requirement.specifier:
            if specifier.operator in (">=", ">", "==", "~=", "==="):
                try:
                    bounds.append(Version(specifier.version.removesuffix(".*")))
                except InvalidVersion:
                    continue
        if bounds and (oldest is None or max(bounds) < oldest):
            oldest = max(bounds)
    return None if oldest is None else f"{oldest.major}.{oldest.minor}"


# where flake8 and pycodestyle read their settings, in flake8's order, and the sections that hold them
_INI_FILES = ("setup.cfg", "tox.ini", ".flake8")
_INI_SECTIONS = ("flake8", "pycodestyle")


def formatter_line_length(directory: Path) -> int:
    """The line length the project's tools use: `line-length` in the nearest .ruff.toml /
    ruff.toml, else pyproject.toml's [tool.ruff], else its [tool.black], else flake8's or
    pycodestyle's `max-line-length` in setup.cfg, tox.ini or .flake8; 88 when none sets it.
    The nearest folder that sets one wins."""
    for candidate in trusted_files_up(directory, (".ruff.toml", "ruff.toml", "pyproject.toml", *_INI_FILES)):
        if candidate.name in _INI_FILES:
            value = _ini_line_length(candidate)
            if value is not None:
                return value
            continue
        try:
            data = read_toml(candidate)
        except ConfigError:
            continue  # the formatter's file is not ours to judge
        tool = data.get("tool", {}) if candidate.name == "pyproject.toml" else {"ruff": data}
        for table in (tool.get("ruff"), tool.get("black")):
            value = table.get("line-length") if isinstance(table, dict) else None
            if type(value) is int and value > 0:
                return value
    return DEFAULT_LINE_LENGTH


def _ini_line_length(path: Path) -> Optional[int]:
    """flake8's / pycodestyle's `max-line-length` (or `max_line_length`) in an ini file, or None."""
    parser = read_ini(path)
    for section in _INI_SECTIONS if parser is not None else ():
        for key in ("max-line-length", "max_line_length"):
            value = parser.get(section, key, fallback="").strip()
            if value.isascii() and value.isdigit() and len(value) <= 6 and int(value) > 0:
                return int(value)
    return None


def _baseline(path: Path, key: str, value: Any) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: `{key}` must be the path of a baseline file")
    return path.parent.resolve() / value


def _rule_options(path: Path, name: str, value: Any, known: Mapping[str, Mapping[str, Any]]):
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `{name}` must be a table of options")
    defaults = known[name]
    options = {}
    for option, setting in value.items():
        if option not in defaults:
            allowed = ", ".join(sorted(defaults)) or "none"
            raise ConfigError(
                f"{path}: unknown option `{name}.{option}`{did_you_mean(option, defaults)} (known: {allowed})"
            )
        if isinstance(defaults[option], tuple):  # a list of strings, kept as a tuple
            options[option] = _string_list(path, f"{name}.{option}", setting)
        elif type(setting) is not type(defaults[option]):
            raise ConfigError(
                f"{path}: `{name}.{option}` must be {type(defaults[option]).__name__}"
            )
        else:
            options[option] = setting
    return options


def _moved_key(path: Path, key: str, value: Any, tables: Mapping[str, Any]) -> Tuple[str, str, Tuple[str, ...]]:
    """A key of [tool.torchlint] that is now a rule's option: (rule name, option, value),
    with a warning that names where it goes; an error if the rule's table sets it too."""
    name, option = MOVED_KEYS[key]
    strings = _string_list(path, key, value)
    table = tables.get(name)
    if isinstance(table, dict) and option in table:
        raise ConfigError(
            f"{path}: `{key}` is given both in [tool.torchlint] and in [tool.torchlint.{name}]; "
            f"keep the one in [tool.torchlint.{name}]"
        )
    warning(f"{path}: `{key}` in [tool.torchlint] is deprecated; use `{option}` in [tool.torchlint.{name}]")
    return name, option, strings


def load_config(
    config_path: Optional[Path],
    cwd: Path,
    rule_option_defaults: Mapping[str, Mapping[str, Any]],
    rule_codes: Collection[str],
    overrides: Sequence[Mapping[str, Any]] = (),
    isolated: bool = False,
) -> Config:
    """Build the Config from a file (given, or the nearest one above `cwd`; none if
    `isolated`), the files it `extend`s, then `overrides` (`--config KEY=VALUE` tables, in
    order); the rules' option tables and codes (the registry's) are what it may name.

    Without a file, the project root (for the cache and relative paths) is the working
    directory."""
    path = None if isolated else config_path or find_config_file(cwd)
    known = _Known(rule_option_defaults, rule_codes)
    if path is not None and not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    layers = _extended(path, known, named=config_path is not None) if path is not None else []
    layers += [_settings_of(OVERRIDE_SOURCE, table, known) for table in overrides]
    settings: Dict[str, Any] = {}
    rule_options: Dict[str, Dict[str, Any]] = {}
    for layer_settings, layer_options in layers:
        for key, value in layer_settings.items():
            settings[key] = settings.get(key, ()) + value if key in ACCUMULATED else value
        for name, options in layer_options.items():
            rule_options.setdefault(name, {}).update(options)
    root = path.parent.resolve() if path is not None else Path.cwd()
    if "target_torch" not in settings and not isolated:
        declared = declared_target_torch(root if path else cwd.resolve())
        if declared is not None:
            settings["target_torch"] = declared
    if "line_length" not in settings:
        settings["line_length"] = DEFAULT_LINE_LENGTH if isolated else formatter_line_length(root if path else cwd.resolve())
    options = tuple(sorted((name, tuple(sorted(values.items()))) for name, values in rule_options.items()))
    return Config(root=root, source=path, rule_options=options, **settings)


OVERRIDE_SOURCE = Path("--config")
# settings a file that extends another adds to, rather than replaces (as ruff's extend-*)
ACCUMULATED = ("extend_select", "extend_exclude", "extend_include")


@dataclass(frozen=True)
class _Known:
    rule_options: Mapping[str, Mapping[str, Any]]
    codes: Collection[str]


def _extended(path: Path, known: "_Known", named: bool, chain: Tuple[Path, ...] = ()) -> List[Tuple[Dict, Dict]]:
    """The settings of the file at `path` after those of the files it `extend`s (as ruff:
    the extending file's values win), each checked and read as any config file is."""
    real = path.resolve()
    if real in chain:
        raise ConfigError(f"{path}: `extend` forms a cycle ({' -> '.join(str(p) for p in (*chain, real))})")
    table = read_table(path, named=named)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.torchlint] must be a table")
    base = table.get("extend")
    layers: List[Tuple[Dict, Dict]] = []
    if base is not None:
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{path}: `extend` must be the path of another config file")
        parent = path.parent / os.path.expandvars(os.path.expanduser(base))
        if not is_file(parent):
            raise ConfigError(f"{path}: `extend` names {parent}, which is not a file")
        if not trusted_above(path.parent.resolve(), parent):
            raise ConfigError(f"{path}: `extend` names {parent}, which another user can write")
        layers = _extended(parent, known, named=False, chain=(*chain, real))
    return layers + [_settings_of(path, {k: v for k, v in table.items() if k != "extend"}, known)]


def _settings_of(path: Path, table: Mapping[str, Any], known: "_Known") -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
    """The Config fields one table sets, checked (errors name `path`), and its rule options."""
    settings: Dict[str, Any] = {}
    rule_options: Dict[str, Dict[str, Any]] = {}
    for key, value in table.items():
        attr = key.replace("-", "_")
        if key in ("select", "extend-select", "ignore", "fixable", "unfixable"):
            settings[attr] = _codes(path, key, value, known.codes)
        elif key in ("exclude", "extend-exclude", "extend-include"):
            settings[attr] = glob_patterns(path, key, _string_list(path, key, value))
        elif key in MOVED_KEYS and MOVED_KEYS[key][0] in known.rule_options:
            name, option, strings = _moved_key(path, key, value, table)
            rule_options.setdefault(name, {})[option] = strings
        elif key == "line-length":
            settings[attr] = _line_length(path, key, value)
        elif key == "target-torch":
            settings[attr] = _target_torch(path, key, value)
        elif key == "baseline":
            settings[attr] = _baseline(path, key, value)
        elif key in ("fix", "unsafe-fixes"):
            settings[attr] = _bool(path, key, value)
        elif key == "per-file-ignores":
            settings[attr] = _per_file_ignores(path, key, value, known.codes)
        elif key == "runtime":  # read by `torchlint doctor`; a typo is an error here too
            from torchlint.core.runtime_requirements import parse_requirements

            parse_requirements(value, path)
        elif key in known.rule_options:
            rule_options.setdefault(key, {}).update(_rule_options(path, key, value, known.rule_options))
        else:
            names = (*KEYS, *known.rule_options)
            raise ConfigError(f"{path}: unknown key `{key}` in [tool.torchlint]{did_you_mean(key, names)}")
    return settings, rule_options
