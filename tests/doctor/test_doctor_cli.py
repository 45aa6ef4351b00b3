"""`torchlint doctor` end to end, as users run it (its entry points' `main`, in this process),
on this CPU-only machine."""

import json

import pytest

from torchlint.doctor.cli import main


def no_traceback(completed):
    assert "Traceback" not in completed.stdout + completed.stderr


def test_passes_without_require_gpu_and_says_cuda_is_unavailable(project, run_python):
    cwd = project('torch = ">=2.1"\n')
    out = run_python(["-m", "torchlint.doctor"], cwd)
    no_traceback(out)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "gpu" in out.stdout and "none (" in out.stdout and out.stdout.rstrip().splitlines()[-1].startswith("OK")


def test_fails_with_require_gpu(project, run_python):
    out = run_python(["-m", "torchlint.doctor"], project("require-gpu = true\n"))
    no_traceback(out)
    assert out.returncode == 1
    assert out.stdout.rstrip().splitlines()[-1].startswith("FAIL")
    # the CPU wheel of torch 2.13 gets the CUDA variant its table knows (issue 32, item 6)
    advice = " ".join(out.stdout.split())
    assert "`pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu130`" in advice
    assert "No CUDA variants" not in advice


@pytest.mark.parametrize(
    "body, key",
    [("cuda-version = \">=12\"\n", "cuda-version"), ('driver = "535+"\n', "runtime.driver")],
)
def test_config_errors_exit_2_with_one_line_naming_file_and_key(project, run_python, body, key):
    cwd = project(body)
    out = run_python(["-m", "torchlint.doctor"], cwd)
    no_traceback(out)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(cwd / "pyproject.toml") in lines[0] and key in lines[0]


def test_json_format_parses_and_carries_facts_and_results(project, run_python):
    out = run_python(["-m", "torchlint.doctor", "--format", "json"], project("require-gpu = true\n"))
    no_traceback(out)
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["failed"] is True and data["facts"]["torch_build"] in ("cpu", "cuda", "rocm")
    assert {"name", "status", "found", "expected", "advice", "detail"} <= set(data["results"][0])


def test_probe_json_then_facts_round_trip(tmp_path, run_python):
    probe = run_python(["-m", "torchlint.doctor", "--probe-json"], tmp_path)
    no_traceback(probe)
    assert probe.returncode == 0
    saved = tmp_path / "facts.json"
    saved.write_text(probe.stdout)
    judged = run_python(["-m", "torchlint.doctor", "--facts", str(saved), "--format", "json"], tmp_path)
    assert judged.returncode == 0 and json.loads(judged.stdout)["facts"] == json.loads(probe.stdout)


def test_smoke_on_a_machine_without_gpu_is_skipped(tmp_path, run_python):
    out = run_python(["-m", "torchlint.doctor", "--smoke", "--format", "json"], tmp_path)
    no_traceback(out)
    smoke = [r for r in json.loads(out.stdout)["results"] if r["name"].startswith("smoke: ")]
    assert out.returncode == 0 and smoke and all(r["status"] == "skip" for r in smoke)


def test_via_torchlint_doctor(project, run_python):
    ok = run_python(["-m", "torchlint", "doctor"], project('torch = ">=2.1"\n'))
    assert ok.returncode == 0, ok.stderr
    failing = run_python(["-m", "torchlint", "doctor", "--format", "json"], project("require-gpu = true\n"))
    assert failing.returncode == 1 and json.loads(failing.stdout)["failed"] is True
    bad = run_python(["-m", "torchlint", "doctor"], project("bogus = 1\n"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    no_traceback(bad)


# In-process: judging recorded facts needs no torch, so these are fast.


def test_recorded_facts_are_judged(facts_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["--facts", str(facts_dir / "healthy-h100.json")]) == 0
    assert main(["--facts", str(facts_dir / "driver-too-old.json")]) == 1
    assert main(["--facts", str(facts_dir / "old-gpu-sm61.json")]) == 1
    assert main(["--facts", str(facts_dir / "cuda-launch-blocking.json")]) == 0
    out = capsys.readouterr().out
    assert "kernel-image" in out and "OK with warnings" in out


def test_requirements_flag_reads_a_bare_table(facts_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    req = tmp_path / "gpu.toml"
    req.write_text('require-gpu = true\ngpu-name = "A100"\n')
    assert main(["--requirements", str(req), "--facts", str(facts_dir / "healthy-h100.json")]) == 1
    req.write_text('require-gpu = true\ngpu-name = ["H100", "A100"]\n')
    assert main(["--requirements", str(req), "--facts", str(facts_dir / "healthy-h100.json")]) == 0


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--bogus"], ["unrecognized arguments"]),
        (["--format", "xml"], ["invalid choice"]),
        (["--facts", "missing.json"], ["missing.json", "cannot read"]),
        (["--facts", "not-json.txt"], ["not JSON"]),
        (["--facts", "list.json"], ["not a torchlint facts record"]),
        (["--facts", "list.json", "--smoke"], ["cannot be combined"]),
        (["--smoke-timeout", "0", "--smoke"], ["must be positive"]),
        (["--requirements", "missing.toml"], ["missing.toml", "cannot read"]),
    ],
)
def test_usage_errors_exit_2_with_one_line(argv, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "not-json.txt").write_text("hello")
    (tmp_path / "list.json").write_text("[1, 2]")
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    for word in words:
        assert word in captured.err


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "--requirements" in capsys.readouterr().out


def test_a_closed_pipe_is_not_an_error(facts_dir, tmp_path, monkeypatch, capsys):
    import os

    monkeypatch.chdir(tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| head`) has gone
    with open(write_end, "w") as closed_pipe, capsys.disabled():
        monkeypatch.setattr("sys.stdout", closed_pipe)
        assert main(["--facts", str(facts_dir / "healthy-h100.json")]) == 0
