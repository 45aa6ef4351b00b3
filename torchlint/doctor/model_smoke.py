"""`torchlint doctor --smoke --model MODULE:FACTORY`: the user's model, one synthetic batch, under the guard.

The factory is called with no arguments and returns a model, or `(model, batch)` where
`batch` is a tensor or a tuple of tensors. For a bare model the batch is made from the
first layer with parameters: a convolution (2 samples, `in_channels`, 64 per spatial
dim), an embedding (token ids below `num_embeddings`), a linear layer or an RNN. The
program runs forward and backward on the GPU when there is one (else the CPU) in a child
process like the other smoke programs. torch is imported first, from the isolated path;
then torchlint's directory and the user's module directory, resolved here, are put on
the path, deliberately.
"""

from __future__ import annotations

import json
from pathlib import Path
from torchlint.doctor.smoke import MARKER, SmokeProgram

_PROGRAM = '''
import importlib, json, sys, traceback
SPEC = json.loads(SPEC_JSON)
import torch  # first, from the isolated path: a ./torch.py beside the user's module never shadows it
from torch import nn
sys.path.append(SPEC["torchlint"])
from torchlint.runtime import GuardError, guard
sys.path.insert(0, SPEC["directory"])

def report(status, found, advice="", detail=""):
    print(MARKER + json.dumps({"status": status, "found": found, "advice": advice, "detail": detail}))
    sys.exit(0)

def synthetic_batch(model):
    for module in model.modules():
        if isinstance(module, nn.modules.conv._ConvNd):
            channels = module.weight.shape[0] if module.transposed else module.in_channels
            return torch.randn(2, channels, *([64] * len(module.kernel_size)))
        if isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
            return torch.randint(0, module.num_embeddings, (2, 16))
        if isinstance(module, nn.RNNBase):
            shape = (2, 8, module.input_size) if module.batch_first else (8, 2, module.input_size)
            return torch.randn(*shape)
        if isinstance(module, nn.Linear):
            return torch.randn(2, module.in_features)
    report("fail", "no batch: the model has no conv, embedding, RNN or linear layer to size one from",
           "Return (model, batch) from the factory.")

try:
    factory = getattr(importlib.import_module(SPEC["module"]), SPEC["factory"])
    made = factory()
except Exception as error:
    report("fail", "the factory failed: %s: %s" % (type(error).__name__, str(error)[:200]),
           "Fix the factory so that it runs with no arguments.", traceback.format_exc())
model, batch = made if isinstance(made, tuple) else (made, None)
if not isinstance(model, nn.Module):
    report("fail", "the factory returned %s, not an nn.Module" % type(model).__name__,
           "Return the model, or (model, batch).")
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
batch = synthetic_batch(model) if batch is None else batch
batch = tuple(b.to(device) for b in (batch if isinstance(batch, (tuple, list)) else (batch,)))
model = model.to(device)
try:
    with guard(model, first=1):
        output = model(*batch)
        tensors = [t for t in (output if isinstance(output, (tuple, list)) else [output])
                   if isinstance(t, torch.Tensor) and t.is_floating_point()]
        loss = sum(t.float().mean() for t in tensors)
        if isinstance(loss, torch.Tensor) and loss.requires_grad:
            loss.backward()
    if device.type == "cuda":
        torch.cuda.synchronize()
except GuardError as error:
    report("fail", "guard: %s at %s" % (error.check, error.module), error.advice, str(error))
report("pass", "forward+backward under the guard on %s, batch %s" % (
    device.type, ", ".join(str(list(b.shape)) for b in batch)))
'''


class ModelSpecError(ValueError):
    """`--model` is not `MODULE:FACTORY` (or `path/to/file.py:FACTORY`)."""


def model_program(spec: str, cwd: Path) -> SmokeProgram:
    """The smoke program for `--model spec`, its module found from `cwd` (the project)."""
    module, factory, directory = _parse(spec, cwd)
    import torchlint

    torchlint_root = str(Path(torchlint.__file__).resolve().parent.parent)
    data = {"module": module, "factory": factory, "directory": directory, "torchlint": torchlint_root}
    code = _PROGRAM.replace("MARKER", repr(MARKER), 1).replace("SPEC_JSON", repr(json.dumps(data)), 1)
    return SmokeProgram(f"model {spec}", code, "fwd+bwd under the guard")


def _parse(spec: str, cwd: Path) -> "tuple[str, str, str]":
    module, sep, factory = spec.rpartition(":")
    if not sep or not module or not factory.isidentifier():
        raise ModelSpecError(f"--model {spec!r}: expected MODULE:FACTORY (e.g. models.unet:build) "
                             "or path/to/file.py:FACTORY")
    if module.endswith(".py"):
        path = (cwd / module).resolve()
        if not path.is_file():
            raise ModelSpecError(f"--model {spec!r}: {path} is not a file")
        return path.stem, factory, str(path.parent)
    if not all(part.isidentifier() for part in module.split(".")):
        raise ModelSpecError(f"--model {spec!r}: {module!r} is not a module name")
    return module, factory, str(cwd.resolve())

