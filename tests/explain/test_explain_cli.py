"""`torchlint explain` end to end."""

import json


from torchlint.explain.cli import main


def test_reads_a_file_and_prints_the_best_match_first(samples_dir, run_explain):
    out = run_explain([str(samples_dir / "tensorflow-cudnn-rnn.log")])
    assert out.returncode == 0, out.stderr
    first = out.stdout.index("[tensorflow-cudnn-rnn]")
    assert first < out.stdout.index("[cudnn-internal-error]")
    for heading in ("Root cause", "Try first", "Dead ends", "Docs:"):
        assert heading in out.stdout
    assert "Traceback" not in out.stderr


def test_reads_stdin_with_no_argument_and_with_dash(samples_dir, run_explain):
    log = (samples_dir / "device-side-assert.log").read_text()
    for args in ([], ["-"]):
        out = run_explain(args, stdin=log)
        assert out.returncode == 0
        assert "[device-side-assert]" in out.stdout and "CUDA_LAUNCH_BLOCKING=1" in out.stdout
        # a host sync reveals an asynchronous kernel error where it happens; it prevents none
        assert "TL003" not in out.stdout.split("Prevented by", 1)[-1]


def test_json_format(samples_dir, run_explain):
    out = run_explain(["--format", "json", str(samples_dir / "cudnn-rnn-projected-double-backward.log")])
    data = json.loads(out.stdout)
    assert data["matched"] is True
    assert [m["id"] for m in data["matches"]] == ["cudnn-rnn-projected-double-backward", "cudnn-not-supported"]
    assert data["matches"][0]["rules"][0] == {"code": "TL004", "name": "cudnn-rnn-double-backward"}


def test_an_unmatched_log_says_so_and_points_at_doctor(run_explain):
    out = run_explain([], stdin="all good\n")
    assert out.returncode == 1
    assert "No known signature matched" in out.stdout and "torchlint doctor" in out.stdout
    data = json.loads(run_explain(["--format", "json"], stdin="all good\n").stdout)
    assert data["matched"] is False and data["matches"] == [] and data["diagnoses"] == []
    assert "torchlint doctor" in data["hint"]


def test_missing_file_is_a_one_line_usage_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope.log")]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "nope.log" in captured.err


def test_bad_flag_is_a_one_line_usage_error(capsys):
    assert main(["--format", "yaml"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_undecodable_bytes_do_not_crash(tmp_path, capsys):
    log = tmp_path / "binary.log"
    log.write_bytes(b"\xff\xfe garbage \x00 CUDA error: an illegal memory access was encountered\n")
    assert main([str(log)]) == 0
    assert "[cuda-illegal-memory-access]" in capsys.readouterr().out


def test_via_torchlint_explain(samples_dir, run_explain):
    out = run_explain(["explain", str(samples_dir / "nccl-timeout.log")], module=("-m", "torchlint"))
    assert out.returncode == 0 and "[nccl-timeout]" in out.stdout


def test_a_closed_pipe_is_not_an_error(samples_dir, monkeypatch, capsys):
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| head`) has gone
    with open(write_end, "w") as closed_pipe:
        with capsys.disabled():
            monkeypatch.setattr("sys.stdout", closed_pipe)
            code = main([str(samples_dir / "nccl-timeout.log")])
    assert code == 0
