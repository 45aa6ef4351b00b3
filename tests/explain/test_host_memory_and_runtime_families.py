"""Families and causes written after the twenty-fourth held-out split, from the sources' own messages: a
process the kernel's out-of-memory killer ended (the shell's `Killed`, dmesg, Kubernetes), TensorRT's
dynamic-shape profiles, ollama's runner exiting, XLA's convolution autotuning under JAX's preallocation,
the package managers' missing kernel headers, a convolution's input and weights on two devices, and
torch's shared-memory message in other letter cases. Each log goes through the real CLI."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("log, expected", [
    ("Loading checkpoint shards:  62%|██████▎   | 5/8 [01:40<01:00, 20.1s/it]Killed",
     ("host-out-of-memory-killed", None, False)),
    ("$ python finetune.py --model llama-13b\nloading weights...\nKilled", ("host-out-of-memory-killed", None, False)),
    ("[1]+  Killed                  python train.py", ("host-out-of-memory-killed", None, False)),
    ("[Tue Mar  5 10:12:01 2024] Out of memory: Killed process 48213 (python) total-vm:61234560kB",
     ("host-out-of-memory-killed", None, False)),
    ("    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137",
     ("host-out-of-memory-killed", None, False)),
    ("[TensorRT] ERROR: Network has dynamic or shape inputs, but no optimization profile has been defined.\n"
     "[TensorRT] ERROR: Network validation failed.",
     ("tensorrt-dynamic-shape-profile", "no-optimization-profile", False)),
    ("[E] 3: [executionContext.cpp::setBindingDimensions::944] Error Code 3: API Usage Error (Parameter check "
     "failed at: runtime/api/executionContext.cpp::setBindingDimensions::944, condition: profileMaxDims.d[i] >= "
     "dimensions.d[i]. Supplied binding dimension [8,3,224,224] for bindings[0] exceed min ~ max range at index 0, "
     "maximum dimension in profile is 4, minimum dimension in profile is 1, but supplied dimension is 8.)",
     ("tensorrt-dynamic-shape-profile", "shape-outside-profile", False)),
    ("Error: llama runner process has terminated: exit status 0xc0000409",
     ("ollama-runner-terminated", "driver-too-old", True)),
    ("jaxlib.xla_extension.XlaRuntimeError: UNKNOWN: Failed to determine best cudnn convolution algorithm for:\n"
     "%cudnn-conv = (f32[8,64,56,56]{3,2,1,0}, u8[0]{0}) custom-call(...)\n  File \"/home/u/envs/jax/lib/python3.10/"
     "site-packages/jax/_src/dispatch.py\", line 88", ("tensorflow-cudnn-init", "jax-preallocation", True)),
    ("Error: Unable to find a match: kernel-devel-6.1.9-100.fc36.x86_64\n[ ✗ ] Proprietary drivers could not be "
     "installed", ("nvidia-driver-install-failed", "kernel-headers-or-dkms", True)),
    ("ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure you have "
     "installed the kernel source files for your kernel", ("nvidia-driver-install-failed", "kernel-headers-or-dkms",
                                                           True)),
    ("Error! Your kernel headers for kernel 5.15.0-91-generic cannot be found at /lib/modules/5.15.0-91-generic/build "
     "or /lib/modules/5.15.0-91-generic/source.", ("nvidia-driver-install-failed", "kernel-headers-or-dkms", True)),
    ("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same",
     ("input-weight-type-mismatch", "input-not-moved", True)),
    ("RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",
     ("input-weight-type-mismatch", "input-dtype", True)),
    ("ERROR: Unexpected bus ERROR encountered in worker. This might be caused by insufficient Shared memory (SHM).",
     ("dataloader-shm-exhausted", None, False)),
])
def test_the_log_names_its_family_and_cause(top_answer, log, expected):
    assert top_answer(log) == expected


@pytest.mark.parametrize("log", [
    "Epoch 3: Killed 4 stale workers and restarted them",  # "Killed" inside a sentence
    "INFO: job 12 was not Killed",
    "The pilot said: Killed it!",
])
def test_killed_inside_a_sentence_is_not_the_oom_killer(run_explain, log):
    data = json.loads(run_explain(["--format", "json"], stdin=log + "\n").stdout)
    assert "host-out-of-memory-killed" not in [found["id"] for found in data["matches"]]


def test_a_dataloader_worker_killed_ranks_before_the_bare_kill(top_answer):
    log = ("RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.\nKilled")
    assert top_answer(log)[0] == "dataloader-worker-killed"


def test_an_ollama_runner_error_behind_a_cuda_error_in_the_server_log_ranks_second(top_answer):
    log = ("CUDA error: out of memory\n  current device: 0, in function alloc at ggml-cuda.cu:375\n"
           "Error: llama runner process has terminated: exit status 2")
    assert top_answer(log)[0] == "cuda-out-of-memory"
