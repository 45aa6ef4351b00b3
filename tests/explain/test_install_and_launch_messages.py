"""Families and causes written after the twenty-first and twenty-second held-out splits, from the sources'
own messages: Lightning's fork launcher, an extension missing one of its own functions, a bare bus error,
a retyped XGBoost message, and a CUDA library of another major than torch's build. Each log goes through
the real CLI."""

from __future__ import annotations

import json

import pytest


def _first(run_explain, log):
    data = json.loads(run_explain(["--format", "json"], stdin=log + "\n").stdout)
    assert data["matches"], log
    first = data["matches"][0]
    causes = first.get("causes") or []
    return first["id"], (causes[0]["id"] if causes else None), data["gpu_claim"]


@pytest.mark.parametrize("log, expected", [
    ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call "
     "`torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any other way?",
     ("cuda-fork-reinit", "lightning-fork-strategy", True)),
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "the 'spawn' start method", ("cuda-fork-reinit", None, True)),
    ("ImportError: /usr/lib/python3/site-packages/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
     "_Z27points_in_boxes_cpu_forwardN2at6TensorES0_S0_",
     ("extension-abi-mismatch", "extension-incomplete-build", False)),
    ("ImportError: /usr/lib/python3/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev", ("extension-abi-mismatch", None, False)),
    ("./run.sh: line 4: 31337 Bus error (core dumped) python train.py", ("dataloader-shm-exhausted", None, False)),
    ("xgboost.core.XGBoostError: XGBoost version not compile with GPU support.",
     ("library-cpu-only-build", None, True)),
    ("ImportError: libcudart.so.10.2: cannot open shared object file: No such file or directory\n"
     "    * torch version: 1.9.0+cu111", ("cuda-library-not-found", "cuda-major-mismatch", True)),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
     "    * torch version: 1.9.0+cu111", ("cuda-library-not-found", None, True)),
])
def test_the_first_explanation_and_cause(log, expected, run_explain):
    assert _first(run_explain, log) == expected
