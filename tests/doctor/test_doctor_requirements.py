from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from torchlint.core.config_files import ConfigError
from torchlint.core.runtime_requirements import Requirements, load_requirements, parse_requirements


def test_full_table_parses_into_a_frozen_dataclass():
    req = parse_requirements({
        "torch": ">=2.1,<3", "cuda": ">=12.1", "cudnn": ">=8.9", "driver": ">=535",
        "compute-capability": ">=8.0", "require-gpu": True, "gpu-name": ["H100", "A100"],
    })
    assert req.torch == SpecifierSet(">=2.1,<3")
    assert req.compute_capability == SpecifierSet(">=8.0")
    assert req.require_gpu is True and req.gpu_name == ("H100", "A100")
    with pytest.raises(Exception):
        req.require_gpu = False  # frozen


def test_gpu_name_may_be_one_string():
    assert parse_requirements({"gpu-name": "H100"}).gpu_name == ("H100",)


def test_empty_table_requires_nothing():
    assert parse_requirements({}) == Requirements()


@pytest.mark.parametrize(
    "table, words",
    [
        ({"cuda-version": ">=12"}, ["unknown key `cuda-version`", "[tool.torchlint.runtime]"]),
        ({"cuda": "12.x"}, ["`runtime.cuda`", "not a PEP 440"]),
        ({"driver": 535}, ["`runtime.driver`", "specifier string"]),
        ({"require-gpu": "yes"}, ["`runtime.require-gpu`", "true or false"]),
        ({"gpu-name": []}, ["`runtime.gpu-name`"]),
    ],
)
def test_bad_tables_name_file_and_key_in_one_line(table, words):
    with pytest.raises(ConfigError) as caught:
        parse_requirements(table, Path("/x/pyproject.toml"))
    message = str(caught.value)
    assert message.startswith("/x/pyproject.toml: ") and "\n" not in message
    for word in words:
        assert word in message


def test_nearest_pyproject_is_found_from_a_subdirectory(project):
    root = project('cuda = ">=12.1"\n')
    (root / "src" / "pkg").mkdir(parents=True)
    req = load_requirements(None, root / "src" / "pkg")
    assert req.cuda == SpecifierSet(">=12.1") and req.source == root / "pyproject.toml"


def test_no_config_anywhere_means_no_requirements(tmp_path):
    assert load_requirements(None, tmp_path).torch is None


@pytest.mark.parametrize(
    "text",
    [
        '[tool.torchlint.runtime]\nrequire-gpu = true\n',
        '[runtime]\nrequire-gpu = true\n',
        'require-gpu = true\n',
    ],
)
def test_requirements_file_holds_tool_table_or_bare_table(tmp_path, text):
    path = tmp_path / "gpu.toml"
    path.write_text(text)
    assert load_requirements(path).require_gpu is True


def test_requirements_file_with_tool_but_no_runtime_is_an_error(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.black]\nline-length = 100\n")
    with pytest.raises(ConfigError, match="no \\[tool.torchlint.runtime\\]"):
        load_requirements(path)


def test_missing_and_invalid_requirements_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_requirements(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("torch = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_requirements(bad)
