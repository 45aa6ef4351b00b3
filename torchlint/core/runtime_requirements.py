"""The declared run-time requirements: `[tool.torchlint.runtime]`, validated in one pass.

```toml
[tool.torchlint.runtime]
torch = ">=2.1,<3"
cuda = ">=12.1"
cudnn = ">=8.9"
driver = ">=535"
compute-capability = ">=8.0"
require-gpu = true
gpu-name = ["H100", "A100"]
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from torchlint.core.config_files import ConfigError, find_config_file, read_table, read_toml
from torchlint.core.console import did_you_mean

TABLE = "[tool.torchlint.runtime]"
SPECIFIER_KEYS = ("torch", "cuda", "cudnn", "driver", "compute-capability")
KNOWN_KEYS = SPECIFIER_KEYS + ("require-gpu", "gpu-name")
# Other GPU runtimes may be declared by distribution name, judged like torch (doctor/runtimes.py).
PACKAGE_KEY = re.compile(r"^(onnxruntime(-gpu)?|tensorflow|jax|jaxlib|jax-cuda\d+-plugin|cupy-cuda[0-9a-z]+"
                         r"|paddlepaddle(-gpu)?|nvidia-[a-z0-9-]+-cu\d+)$")


@dataclass(frozen=True)
class Requirements:
    """What the project declares it needs at run time. Absent keys impose nothing."""

    source: Optional[Path] = None
    torch: Optional[SpecifierSet] = None
    cuda: Optional[SpecifierSet] = None
    cudnn: Optional[SpecifierSet] = None
    driver: Optional[SpecifierSet] = None
    compute_capability: Optional[SpecifierSet] = None
    require_gpu: bool = False
    gpu_name: Tuple[str, ...] = ()
    packages: Tuple[Tuple[str, SpecifierSet], ...] = ()  # (distribution, specifier) in file order


def parse_requirements(table: Mapping[str, Any], source: Optional[Path] = None) -> Requirements:
    """Validate a runtime table; raise `ConfigError` naming the file and key on any fault."""
    where = str(source) if source is not None else "<requirements>"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: {TABLE} must be a table")
    values: dict = {}
    packages = []
    for key, value in table.items():
        if PACKAGE_KEY.match(key):
            packages.append((key, _specifier(where, key, value)))
            continue
        if key not in KNOWN_KEYS:
            raise ConfigError(
                f"{where}: unknown key `{key}` in {TABLE}{did_you_mean(key, KNOWN_KEYS)} (known: {', '.join(KNOWN_KEYS)})"
            )
        if key in SPECIFIER_KEYS:
            values[key.replace("-", "_")] = _specifier(where, key, value)
        elif key == "require-gpu":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `runtime.require-gpu` must be true or false")
            values["require_gpu"] = value
        else:
            values["gpu_name"] = _gpu_names(where, value)
    return Requirements(source=source, packages=tuple(packages), **values)


def _specifier(where: str, key: str, value: Any) -> SpecifierSet:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: `runtime.{key}` must be a version specifier string like \">=12.1\"")
    if not value.strip():  # SpecifierSet("") means "any": almost surely a slip, not a requirement
        raise ConfigError(f"{where}: `runtime.{key}` is empty; write a specifier like \">=12.1\" or remove the key")
    try:
        return SpecifierSet(value)
    except InvalidSpecifier:
        raise ConfigError(
            f"{where}: `runtime.{key}` = {value!r} is not a PEP 440 version specifier "
            "(write e.g. \">=12.1\" or \">=2.1,<3\")"
        ) from None


def _gpu_names(where: str, value: Any) -> Tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"{where}: `runtime.gpu-name` must be a non-empty string or list of strings")
    return tuple(names)


def load_requirements(path: Optional[Path] = None, cwd: Optional[Path] = None) -> Requirements:
    """The requirements from `path` (a `--requirements` file), else from the nearest config.

    A `--requirements` file holds `[tool.torchlint.runtime]`, a `[runtime]` table, or the
    keys bare at top level. With no file and no config, nothing is required.
    """
    if path is not None:
        return parse_requirements(_runtime_table_of(Path(path)), Path(path))
    config = find_config_file(cwd or Path.cwd())
    if config is None:
        return Requirements()
    table = read_table(config)
    if not isinstance(table, dict):
        raise ConfigError(f"{config}: [tool.torchlint] must be a table")
    return parse_requirements(table.get("runtime", {}), config)


def _runtime_table_of(path: Path) -> Mapping[str, Any]:
    data = read_toml(path)
    if "tool" in data:
        tool = data["tool"]
        torchlint = tool.get("torchlint") if isinstance(tool, dict) else None
        runtime = torchlint.get("runtime") if isinstance(torchlint, dict) else None
        if runtime is None:
            raise ConfigError(f"{path}: has a [tool] table but no {TABLE}")
        return runtime
    if isinstance(data.get("runtime"), dict):
        return data["runtime"]
    return data
