"""Families and causes written after the twenty-sixth held-out split, from the sources' own messages: the CUDA
error NCCL names inside its "unhandled cuda error" (NCCL's CUDACHECK), tiny-cuda-nn's CUDA_CHECK_THROW, a CUDA
header missing when an extension compiles, PaddlePaddle's architecture check, a driver older than the kernel
(modpost's GPL-only symbol), GPU PhysX's buffers under an illegal memory access, a container without the NVIDIA
runtime reported as a driver too old, and NCCL's shared-memory transport named in its INFO lines. Each log goes
through the real CLI."""

from __future__ import annotations

import json

import pytest

NCCL = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n")


@pytest.mark.parametrize("log, expected", [
    (NCCL + "Cuda failure 'system not yet initialized'", ("cuda-driver-setup", "fabric-manager-not-running", True)),
    (NCCL + "Cuda failure 802 'system not yet initialized'", ("cuda-driver-setup", "fabric-manager-not-running", True)),
    (NCCL + "Cuda failure 'peer access is not supported between these two devices'", ("cuda-peer-access", None, True)),
    (NCCL + "Cuda failure 'out of memory'", ("cuda-out-of-memory", "working-set", True)),
    ("Uncaught exception: /src/instant-ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/gpu_memory.h:123 "
     "cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed with error out of memory",
     ("cuda-out-of-memory", "working-set", True)),
    ("RuntimeError: /tcnn/src/gpu_memory.h:590 cudaMalloc(&rawptr, n_bytes) failed: out of memory",
     ("cuda-out-of-memory", "working-set", True)),
    ("csrc/fused_adam.cu:1:10: fatal error: cuda_runtime.h: No such file or directory\ncompilation terminated.",
     ("cuda-headers-missing", None, False)),
    ("C:\\torch\\include\\ATen/cuda/CUDAContext.h(6): fatal error C1083: Cannot open include file: 'cublas_v2.h': "
     "No such file or directory", ("cuda-headers-missing", None, False)),
    ("In file included from csrc/ops.cu:4:\n/usr/include/cusparse.h: fatal error: cusparse.h: No such file or "
     "directory", ("cuda-headers-missing", None, False)),
    ("RuntimeError: (PreconditionNotMet) Mismatched GPU Architecture: The installed PaddlePaddle package was compiled "
     "for 60 61 70 75 80 86, but your current GPU is 120", ("no-kernel-image", "paddle-build-architectures", True)),
    ("  MODPOST /var/lib/dkms/nvidia/470.223.02/build/Module.symvers\nFATAL: modpost: GPL-incompatible module "
     "nvidia.ko uses GPL-only symbol '__rcu_read_lock'",
     ("nvidia-driver-install-failed", "driver-older-than-kernel", True)),
    ("[Error] [carb.gym.plugin] Gym cuda error: an illegal memory access was encountered: ../../../source/plugins/"
     "carb/gym/impl/Gym/GymPhysX.cpp: 5993\nRuntimeError: CUDA error: an illegal memory access was encountered",
     ("cuda-illegal-memory-access", "physx-gpu-buffers", True)),
    ("$ docker compose up\nError: cudaGetDeviceCount failed: CUDA driver version is insufficient for CUDA runtime "
     "version", ("cuda-driver-too-old", "container-without-gpu-runtime", True)),
    ("node1:77:90 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, "
     "NCCL version 2.14.3", ("nccl-system-error", "shm", True)),
])
def test_the_log_names_its_family_and_cause(top_answer, log, expected):
    assert top_answer(log) == expected


@pytest.mark.parametrize("log, expected", [
    # NCCL with no inner CUDA error named stays NCCL's own answer
    (NCCL + "Cuda failure 'unknown error'", "nccl-unhandled-cuda-error"),
    # the driver's version is in the paste: the driver really is too old, container or not
    ("$ docker run --gpus all img\nNVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4\n"
     "RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "cuda-driver-too-old"),
    # a header of the project itself is not the CUDA toolkit's
    ("src/kernels.cu:3:10: fatal error: my_kernels.h: No such file or directory", None),
])
def test_without_the_evidence_the_answer_stays_general(run_explain, log, expected):
    data = json.loads(run_explain(["--format", "json"], stdin=log + "\n").stdout)
    if expected is None:
        assert not any(m["id"] == "cuda-headers-missing" for m in data["matches"])
        return
    first = data["matches"][0]
    assert first["id"] == expected
    assert not (first.get("causes") or []) or first["causes"][0]["id"] != "container-without-gpu-runtime"
