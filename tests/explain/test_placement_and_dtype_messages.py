"""Every wording torch has printed for operands on two devices or of two dtypes, taken from its sources
(TensorIterator, the legacy TH argument checks, TensorUtils' checkSameGPU / checkAllSameGPU / checkBackend,
cat, the RNN's hidden-state check, DataParallel, advanced indexing, check_generator, TensorBase's dtype
check, the autograd engine's output check, addmm/mm/dot), and XGBoost's mismatched-devices warning: each is
fed through the real CLI and must name its family, and the evidence in the log must pick the cause."""

from __future__ import annotations

import json

import pytest

DEVICE_WORDINGS = [
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    "RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' in call to "
    "_th_addmm",
    "RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'",
    "RuntimeError: Expected object of type torch.cuda.FloatTensor but found type torch.FloatTensor for argument #2 "
    "'weight'",
    "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
    "'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)",
    "RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments "
    "for addmm)",
    "RuntimeError: Tensor for argument #1 'self' is on CPU, Tensor for argument #2 'mat2' is on CPU, but expected "
    "them to be on GPU (while checking arguments for addmm)",
    "RuntimeError: expected device cuda:0 but got device cpu",
    "RuntimeError: All input tensors must be on the same device. Received cuda:0 and cpu",
    "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of "
    "them on device: cpu",
    "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)",
    "RuntimeError: Expected tensor to have CUDA Backend, but got tensor with CPU Backend (while checking arguments "
    "for cudnn_batch_norm)",
]


def _first(run_explain, log):
    data = json.loads(run_explain(["--format", "json"], stdin=log + "\n").stdout)
    assert data["matches"], log
    first = data["matches"][0]
    causes = first.get("causes") or []
    return first["id"], (causes[0]["id"] if causes else None), data


@pytest.mark.parametrize("log", DEVICE_WORDINGS)
def test_each_device_wording_names_the_device_family(log, run_explain):
    family, _, data = _first(run_explain, log)
    assert family == "tensors-on-different-devices"
    assert data["gpu_claim"] is True


@pytest.mark.parametrize("log, cause", [
    ("  File \"/usr/lib/python3/site-packages/torch/nn/modules/rnn.py\", line 812, in forward\n"
     "RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
     "tensor at cpu", "rnn-hidden-state"),
    ("RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cpu and hidden tensor "
     "at cuda:0", "rnn-hidden-state"),
    ("model = model.to('cuda:1')\nRuntimeError: Expected all tensors to be on the same device, but found at least "
     "two devices, cuda:1 and cuda:0!", "two-gpus"),
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "input-not-moved"),
])
def test_the_log_picks_the_device_cause(log, cause, run_explain):
    assert _first(run_explain, log)[:2] == ("tensors-on-different-devices", cause)


@pytest.mark.parametrize("log", [
    "  File \"/usr/lib/python3/site-packages/torch/utils/data/sampler.py\", line 132, in __iter__\n"
    "    yield from torch.randperm(n, generator=generator).tolist()\n"
    "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'",
    "RuntimeError: Expected a 'cpu' device type for generator but found 'cuda'",
    "RuntimeError: Expected a 'mps' device type for generator but found 'cpu'",
])
def test_a_generator_of_another_device_is_its_own_family(log, run_explain):
    family, _, data = _first(run_explain, log)
    assert family == "generator-device-mismatch"
    advice = " ".join(data["matches"][0]["workarounds"])
    assert "torch.Generator(device=" in advice


@pytest.mark.parametrize("log, cause", [
    ("scaler = torch.cuda.amp.GradScaler()\n    with torch.cuda.amp.autocast():\n"
     "RuntimeError: expected scalar type Float but found Half", "op-outside-autocast"),
    ("RuntimeError: expected scalar type Double but found Float", "numpy-float64"),
    ("RuntimeError: Found dtype Double but expected Float", "numpy-float64"),
    ("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #2 'target' in call "
     "to _thnn_nll_loss_forward", "target-dtype"),
    ("    loss = criterion(out, y)\n  File \"/usr/lib/python3/site-packages/torch/nn/functional.py\", line 3026, in "
     "cross_entropy\nRuntimeError: expected scalar type Long but found Int", "target-dtype"),
    ("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != float", None),
    ("RuntimeError: self and mat2 must have the same dtype, but got Half and Float", None),
    ("RuntimeError: expected both vectors to have same dtype, but found Float and Half", None),
])
def test_a_dtype_mismatch_is_no_gpu_problem_and_the_log_picks_its_cause(log, cause, run_explain):
    family, first_cause, data = _first(run_explain, log)
    assert family == "dtype-mismatch"
    if cause:
        assert first_cause == cause
    assert data["gpu_claim"] is False


def test_xgboosts_mismatched_devices_warning_gets_xgboost_advice_only(run_explain):
    log = ("/usr/local/lib/python3.10/dist-packages/xgboost/core.py:160: UserWarning: [17:42:03] WARNING: "
           "/workspace/src/common/error_msg.cc:58: Falling back to prediction using DMatrix due to mismatched devices. "
           "This might lead to higher memory usage and slower performance. XGBoost is running on: cuda:0, while the "
           "input data is on: cpu.")
    family, _, data = _first(run_explain, log)
    assert family == "xgboost-mismatched-devices"
    advice = " ".join(data["matches"][0]["workarounds"] + data["matches"][0]["dead_ends"])
    assert "set_params(device='cpu')" in advice and "torch" not in advice.lower()


@pytest.mark.parametrize("log", [
    "I checked the providers and only ['CPUExecutionProvider'] is available; onnxruntime-gpu 1.6.0 is installed",
    ">>> ort.get_available_providers()\n['AzureExecutionProvider', 'CPUExecutionProvider']",
])
def test_onnxruntimes_cpu_only_provider_list_names_the_cpu_package(log, run_explain):
    assert _first(run_explain, log)[:2] == ("onnxruntime-cuda-provider", "cpu-only-package")
