"""Hypothesis strategies for the fuzz properties: PyTorch-shaped modules salted with every
rule's trigger shapes, and hypothesmith's arbitrary modules salted the same way.

A snippet is a list of `(depth, text)` lines; `render` turns it into source with one
indentation unit, odd comments and blank lines, form feeds, a newline style, and maybe a
BOM or a coding cookie. The fragments follow the rules' triggers, gates and INVALID
examples (rules/*.py): heavy imports used in functions (TL001), convolutions in
`forward` (TL002), host syncs in hot paths (TL003, implicit ones TL005), RNNs reached
by double backward (TL004), each in several shapes that sit on either side of the rules' gates.
"""

from __future__ import annotations

import ast
import codecs
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional, Sequence, Tuple

from hypothesis import strategies as st

from fuzz_checks import compiles

Line = Tuple[int, str]
Block = List[Line]

BOM = codecs.BOM_UTF8
# names of parameters and locals: ASCII, accented, Greek, one that NFKC folds to `x`
NAMES = ("x", "inp", "données", "λ", "ｘ", "feats")
CLASS_NAMES = ("Net", "Critic", "Décodeur", "Model", "Head")
INDENTS = ("    ", "\t", "  ", "        ")
NEWLINES = ("\n", "\r\n", "\r")
COMMENTS = ("# note", "# type: ignore", "# é ✓", "#", "# note", "# type: ignore", "# é ✓", "#", "# noqa", "# noqa: TL001")


@dataclass(frozen=True)
class Program:
    """A generated source file: its text (newlines already in their final style) and how
    it is stored as bytes."""

    text: str
    encoding: str = "utf-8"
    bom: bool = False

    def to_bytes(self) -> bytes:
        data = self.text.encode(self.encoding)
        return BOM + data if self.bom else data


def indent(block: Sequence[Line], by: int = 1) -> Block:
    return [(depth + by, text) for depth, text in block]


def lines(*texts: str, depth: int = 0) -> Block:
    """Lines written with four-space indentation, turned into depths."""
    block = []
    for text in texts:
        stripped = text.lstrip(" ")
        block.append((depth + (len(text) - len(stripped)) // 4, stripped))
    return block


# ---- module headers -----------------------------------------------------------------

TORCH_IMPORTS = (
    "import torch",
    "import torch.nn as nn",
    "from torch import nn",
    "import torch.nn.functional as F",
    "import pytorch_lightning as pl",
    "import lightning as L",
    "from torch.autograd import grad",
    "from torch.func import jacrev, functional_call",
    "from .base import Base",
)


@st.composite
def torch_header(draw) -> Block:
    chosen = draw(st.lists(st.sampled_from(TORCH_IMPORTS), unique=True, max_size=6))
    # the common case: the imports the fragments spell (`torch`, `nn`, `F`, `pl`)
    if draw(st.integers(0, 3)):
        chosen = ["import torch", "from torch import nn", "import torch.nn.functional as F",
                  "import pytorch_lightning as pl"] + chosen  # fmt: skip
    return [(0, text) for text in dict.fromkeys(chosen)]


# ---- TL001: heavy imports -------------------------------------------------------------

# (import statement, the name it binds, a use of that name)
HEAVY_IMPORTS = (
    ("import wandb", "wandb", "wandb.log({'loss': 1})"),
    ("import wandb as wb", "wb", "wb.init(project='p')"),
    ("from torch.utils.tensorboard import SummaryWriter", "SummaryWriter", "SummaryWriter('runs')"),
    ("from torch.utils import data, tensorboard", "tensorboard", "tensorboard.SummaryWriter()"),
    ("import numba", "numba", "numba.njit(print)"),
    ("import mlflow, os", "mlflow", "mlflow.log_metric('a', 1)"),
    ("from wandb import init as wandb_init", "wandb_init", "wandb_init()"),
    ("import tensorboardX", "tensorboardX", "tensorboardX.SummaryWriter()"),
)

# ways a module exports or reaches its own attribute by name
EXPORTS = (
    "__all__ = [{q}]",
    "__all__ = ({q},)",
    "__all__ = []\n__all__ += [{q}]",
    "__all__ = ['main']\n__all__.append({q})",
    "__all__ = list()\n__all__.extend([{q}])",
    "FOUND = globals()[{q}]",
    "import sys\nFOUND = getattr(sys.modules[__name__], {q})",
)


@st.composite
def heavy_import(draw) -> Tuple[Block, Block]:
    """(header lines, body blocks) for one heavy import and its uses."""
    statement, name, use = draw(st.sampled_from(HEAVY_IMPORTS))
    header: Block = [(0, statement)]
    body: Block = []
    arg = draw(st.sampled_from(NAMES))
    shapes = draw(
        st.lists(
            st.sampled_from(
                ("plain", "docstring", "nested", "async", "decorated", "method", "comprehension", "walrus") * 3
                + ("one-line", "lambda", "module-level", "default", "annotation")
            ),
            min_size=1,
            max_size=3,
        )
    )  # fmt: skip
    for index, shape in enumerate(shapes):
        fname = f"log_{index}"
        if shape == "plain":
            body += lines(f"def {fname}({arg}):", f"    return {use}")
        elif shape == "docstring":
            body += lines(f"def {fname}():", "    '''Log.'''")
            if draw(st.booleans()):
                body += lines(f"    {use}")
        elif shape == "one-line":
            body += lines(f"def {fname}(): return {use}")
        elif shape == "nested":
            body += lines(f"def {fname}():", "    def inner():", f"        return {use}", "    return inner")
        elif shape == "async":
            body += lines(f"async def {fname}():", f"    await something({use})")
        elif shape == "decorated":
            body += lines("@functools.lru_cache()", f"def {fname}():", f"    return {use}")
        elif shape == "method":
            body += lines(f"class Logger{index}:", "    def start(self):", f"        return {use}")
        elif shape == "lambda":
            body += lines(f"{fname} = lambda: {use}")
        elif shape == "module-level":
            body += lines(f"RUN_{index} = {use}")
        elif shape == "comprehension":
            body += lines(f"def {fname}(xs):", f"    return [{use} for _ in xs]")
        elif shape == "default":
            body += lines(f"def {fname}(w={name}):", "    return w")
        elif shape == "walrus":
            body += lines(f"def {fname}():", f"    if (run := {use}):", "        return run")
        elif shape == "annotation":
            body += lines(f"def {fname}(w: {name}) -> None:", f"    {use}")
    if draw(st.integers(0, 4)) == 0:
        export = draw(st.sampled_from(EXPORTS)).format(q=repr(name))
        header += [(0, text) for text in export.split("\n")]
    return header, body


# ---- TL002: convolutions in forward ----------------------------------------------------

CONV_LAYERS = (
    "nn.Conv2d(3, 8, 3)",
    "nn.Conv1d(3, 8, 3, padding=1)",
    "torch.nn.Conv3d(4, 8, 3)",
    "nn.ConvTranspose2d(8, 8, 2)",
    "nn.Sequential(nn.Conv1d(3, 8, 3), nn.ReLU())",
    "conv_bn_relu(3, 8)",
    "nn.Conv2d(*sizes)",
    "nn.Conv2d(**spec)",
    "nn.LazyConv2d(8, 3)",
    "nn.Linear(3, 8)",
)
MODULE_BASES = ("nn.Module", "torch.nn.Module", "pl.LightningModule", "Base", "object", "nn.Conv2d")


def forward_bodies(x: str) -> Tuple[Block, ...]:
    """Bodies of `forward(self, x, y=None, *rest, **kw)` that call `self.conv`."""
    return (
        lines(f"return self.conv({x})"),
        lines(f"fused = torch.cat([{x}, y], dim=1)", "return self.conv(fused)"),
        lines(f"out = self.conv({x}) if y is None else {x}", "return out"),
        lines("return self.conv(*rest)"),
        lines(f"return self.conv({x}, **kw)"),
        lines(f"if (z := self.conv({x})) is not None:", "    return z", f"return {x}"),
        lines(f"return [self.conv(t) for t in ({x}, y)]"),
        lines("f = lambda t: self.conv(t)", f"return f({x})"),
        lines(f"match {x}:", "    case None:", f"        return {x}", "    case _:", f"        return self.conv({x})"),
        lines("def inner(t):", "    return self.conv(t)", f"return inner({x})"),
        lines(f"return F.conv2d({x}, self.weight)"),
        lines("h = \\", f"    self.conv({x})", "return h"),
        lines("return self.conv(  # the stem", f"    {x},", ")"),
        lines(f"assert {x}.shape[1] == 3", f"return self.conv({x})"),
        lines(f"{x} = self.conv({x}); return {x}"),
        lines(f"h = self.stem({x})", "return self.conv(h)"),
        lines("with torch.no_grad():", f"    y = self.conv({x})", "return y"),
        lines("try:", f"    return self.conv({x})", "except RuntimeError:", "    raise"),
        lines("for _ in range(2):", f"    {x} = self.conv({x})", f"return {x}"),
    )


@st.composite
def conv_module(draw) -> Tuple[Block, Block]:
    x = draw(st.sampled_from(NAMES))
    layer = draw(st.sampled_from(CONV_LAYERS[:6] * 2 + CONV_LAYERS[6:]))
    base = draw(st.sampled_from(MODULE_BASES[:4] * 2 + MODULE_BASES[4:]))
    name = draw(st.sampled_from(CLASS_NAMES))
    body = draw(st.sampled_from(forward_bodies(x)))
    head: Block = []
    if "conv_bn_relu" in layer:
        head += lines("def conv_bn_relu(i, o):", "    return nn.Sequential(nn.Conv1d(i, o, 3), nn.BatchNorm1d(o), nn.ReLU())")
    signature = draw(st.sampled_from((f"self, {x}, y=None, *rest, **kw", f"self, {x}, y=None, *rest, **kw")))
    forward_kind = draw(st.sampled_from(("def", "def", "async def", "one-line", "decorated")))
    block = lines(f"class {name}({base}):", "    def __init__(self, *sizes, **spec):", "        super().__init__()")
    block += lines(f"self.conv = {layer}", "self.stem = nn.Linear(3, 3)", depth=2)
    if forward_kind == "one-line":
        block += lines(f"def forward({signature}): return self.conv({x})", depth=1)
    else:
        prefix = "async def" if forward_kind == "async def" else "def"
        if forward_kind == "decorated":
            block += lines("@torch.jit.ignore", depth=1)
        block += lines(f"{prefix} forward({signature}):", depth=1)
        block += indent(draw(wrapped(body)), 2)
    return [], head + block


@st.composite
def wrapped(draw, block: Block) -> Block:
    """The block, maybe inside an if/try/with (at the same level as its siblings)."""
    kind = draw(st.sampled_from(("none", "none", "if", "try", "with", "else")))
    if kind == "if":
        return [(0, "if True:")] + indent(block)
    if kind == "try":
        return [(0, "try:")] + indent(block) + [(0, "except Exception:"), (1, "raise")]
    if kind == "with":
        return [(0, "with contextlib.suppress(ValueError):")] + indent(block)
    if kind == "else":
        return [(0, "if False:"), (1, "pass"), (0, "else:")] + indent(block)
    return list(block)


# ---- TL003: host syncs in hot paths ------------------------------------------------------

SYNC_STATEMENTS = (
    ("self.log('train/loss', loss.item(), prog_bar=True)",),
    ("self.log_dict({'a': loss.item(), 'b': 1})",),
    ("count = int(mask.sum().item())", "loss = loss.sum() / (count + 1e-6)"),
    ("n = loss.item()", "loss = loss * n"),
    ("count = int(mask.sum().item())", "return (loss * mask).sum() / (count + 1e-6)"),
    ("total = batch.sum().item()", "return loss / total - 1"),
    ("values = loss.tolist()",),
    ("arr = loss.cpu().numpy()",),
    ("torch.cuda.synchronize()",),
    ("k = int(loss.sum().item())", "top = loss.topk(k)"),
    ("scores = [s.item() for s in batch]",),
    ("self.log('x', loss.item(), **opts)",),
    ("self.log(*args, loss.item())",),
    ("if loss.item() > 0: pass",),
    ("self.log('loss', (m := loss.mean()).item())",),
    ("self.log('a', \\", "         loss.item())"),
    ("self.log('np', np.float32(1.0).item())",),
    # implicit syncs (TL005): a tensor's truth, float(), a loop over nonzero, an assert
    ("if mask.any():", "    loss = loss.masked_fill(mask, 0.0)"),
    ("if not torch.isfinite(loss).all():", "    return None"),
    ("scale = float(loss.abs().max())",),
    ("for index in torch.nonzero(mask):", "    loss = loss + index"),
    ("assert torch.isfinite(loss).all(), 'loss is not finite'",),
    ("return self._select(loss, mask)",),
)
HOT_PATHS = ("training_step", "validation_step", "test_step", "predict_step", "forward", "on_train_epoch_end")


@st.composite
def sync_module(draw) -> Tuple[Block, Block]:
    name = draw(st.sampled_from(CLASS_NAMES))
    base = draw(st.sampled_from(("pl.LightningModule", "L.LightningModule", "nn.Module", "Base")))
    hook = draw(st.sampled_from(HOT_PATHS))
    chosen = draw(st.lists(st.sampled_from(SYNC_STATEMENTS), min_size=1, max_size=3))
    body = lines("loss = self(batch).mean()", "mask = batch")
    for statement in chosen:
        body += draw(wrapped(lines(*statement)))
    body += lines("return loss")
    block = lines(f"class {name}({base}):", f"    def {hook}(self, batch, batch_idx=0, *args, **opts):")
    block += indent(body, 2)
    block += lines("def _select(self, boxes, keep):", "    return [boxes[i] for i in torch.nonzero(keep)]", depth=1)
    if draw(st.integers(0, 3)) == 0:
        block += lines(
            "class Scale(torch.autograd.Function):",
            "    @staticmethod",
            "    def backward(ctx, grad):",
            "        return grad.cpu() * 2",
        )
    return [], block


# ---- TL004: RNNs under double backward -------------------------------------------------

RNN_LAYERS = (
    "nn.GRU(8, 16, batch_first=True)",
    "nn.LSTM(4, 4, num_layers=2)",
    "nn.LSTM(16, 32, proj_size=8)",
    "nn.LSTM(4, 4, **kw)",
    "nn.LSTM(*args, proj_size=0)",
    "nn.RNN(4, 4)",
    "nn.LSTMCell(4, 4)",
)
SECOND_ORDER = (
    "g, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)",
    "g = torch.autograd.grad(critic(real).sum(), real, None, False, True)",
    "g = torch.autograd.grad(critic(real).sum(), real, create_graph=flag)",
    "critic(real).sum().backward(create_graph=True)",
    "g = torch.autograd.functional.hessian(lambda t: critic(t).sum(), real)",
    "g = torch.func.jacrev(torch.func.jacrev(lambda t: critic(t).sum()))(real)",
    "g = grad(critic(real).sum(), real, create_graph=True)[0]",
    "g = torch.autograd.grad(critic(real).sum(), real, create_graph=False)",
)


@st.composite
def rnn_module(draw) -> Tuple[Block, Block]:
    layer = draw(st.sampled_from(RNN_LAYERS))
    name = draw(st.sampled_from(CLASS_NAMES))
    call = draw(st.sampled_from(("out, _ = self.rnn(x)", "out = self.rnn(x)[0]", "out, _ = self.rnn(*args)")))
    forward_body = draw(wrapped(lines(call)))
    if draw(st.booleans()):
        forward_body = lines("with torch.backends.cudnn.flags(enabled=False):") + indent(forward_body)
    block = lines(f"class {name}(nn.Module):", "    def __init__(self, *args, **kw):", "        super().__init__()")
    block += lines(f"self.rnn = {layer}", depth=2)
    block += lines("def forward(self, x, *args):", depth=1)
    block += indent(forward_body, 2) + lines("return out.sum()", depth=2)
    second = draw(st.sampled_from(SECOND_ORDER))
    penalty = lines("real.requires_grad_(True)", second, "return real")
    if draw(st.integers(0, 3)) == 0:
        penalty = lines("with torch.backends.cudnn.flags(enabled=False):") + indent(penalty[:-1]) + penalty[-1:]
    flag = draw(st.sampled_from(("flag=False", "flag=True", "flag")))
    block += lines(f"def gradient_penalty(critic, real, {flag}):") + indent(penalty)
    block += lines("def train_step(batch):", f"    return gradient_penalty({name}(), batch, True)")
    if draw(st.integers(0, 4)) == 0:
        block += lines(f"rnn = torch.{layer}", "penalty = torch.func.hessian(lambda t: rnn(t)[0].sum())")
    return [], block


# ---- TL101-TL103: deprecated, removed and non-public torch APIs ----------------------------

# (import lines, a use) in the shapes the fixes rewrite, skip, or cannot reason about
DEPRECATED_USES = (
    ((), "q, r = torch.qr(x, some=False)"),
    ((), "u = torch.cholesky(x, upper=True).sum() + torch.cholesky(x, upper=flag).sum()"),
    ((), "y = torch.chain_matmul(x, x, *rest)"),
    ((), "steps = torch.range(0, 9) + torch.range(5, -5, -2, dtype=torch.long)"),
    (("import torch as T",), "o = T.ger(x, x) + T.solve(x, x)"),
    (("from torch.cuda.amp import autocast",), "with autocast(dtype=torch.float16):\n    y = x"),
    (("from torch import cuda",), "s = cuda.amp.GradScaler(2.0, enabled=False)"),
    (("from torch.utils.data._utils.collate import default_collate, default_convert",), "b = default_collate([x])"),
    (("from torch._six import inf, string_classes as S",), "ok = isinstance(x, S) and x < inf"),
    (("from functorch import vmap, grad",), "g = vmap(grad(f))"),
    (("from torch.autograd import Variable",), "v = Variable(x + 1)"),
)


def uses_in_a_function(draw, uses, signature: str) -> Tuple[Block, Block]:
    """Up to three of `uses` ((import lines, statements)): their imports, and their
    statements in one function `def {signature}:` that returns x."""
    chosen = draw(st.lists(st.sampled_from(uses), min_size=1, max_size=3, unique=True))
    header = [(0, statement) for statement in dict.fromkeys(s for imports, _ in chosen for s in imports)]
    body = lines(f"def {signature}:")
    for _, use in chosen:
        body += lines(*use.split("\n"), depth=1)
    return header, body + lines("    return x")


@st.composite
def deprecated_api(draw) -> Tuple[Block, Block]:
    return uses_in_a_function(draw, DEPRECATED_USES, "step(x, f, flag, rest)")


# ---- TL201-TL209: loads, checkpoints, typos, torchvision, cuDNN and CUDA variables -----------

# (import lines, statements of a function body) in the shapes the rules fix, skip, or only report
CORRECTNESS_USES = (
    ((), "sd = torch.load(path, map_location='cpu')\nfull = torch.load(path, weights_only=False)"),
    (("import pickle",), "o = torch.load(path,\n    pickle_module=pickle,\n)"),
    (("from torch.hub import load_state_dict_from_url",), "w = load_state_dict_from_url(cfg.url)"),
    (("from torch.utils.checkpoint import checkpoint as ckpt",), "y = ckpt(f, x) + ckpt(f, x, **opts)"),
    (("import torch.utils.checkpoint as cp",), "y = cp.checkpoint_sequential(layers, 2, x,)"),
    ((), "x.weight.require_grad = False\na.requires_grads, b.required_grad = True, flag"),
    (("import torchvision.models as tvm",), "m = tvm.resnet50(pretrained=True, progress=False)"),
    (("from torchvision.models import detection",), "d = detection.fasterrcnn_resnet50_fpn(pretrained_backbone=flag)"),
    (("from torchvision.transforms import v2",), "t = v2.Compose([v2.ToTensor(), v2.ToTensor()])"),
    (("import os",), "x = x.cuda()\nos.environ['CUDA_LAUNCH_BLOCKING'] = '1'\nos.environ.setdefault('TORCH_USE_CUDA_DSA', '1')"),
    ((), "torch.backends.cudnn.enabled = False"),
)


@st.composite
def correctness_api(draw) -> Tuple[Block, Block]:
    return uses_in_a_function(draw, CORRECTNESS_USES, "load_step(x, f, flag, path, cfg, layers, a, b, **opts)")


# ---- rendering ---------------------------------------------------------------------------

FRAGMENTS = st.one_of(heavy_import(), conv_module(), sync_module(), rnn_module(), deprecated_api(), correctness_api())


@st.composite
def decorate(draw, block: Block) -> Block:
    """Comments, blank lines and trailing comments in odd places; never after a line
    continuation, where they would end the statement."""
    out: Block = []
    for depth, text in block:
        continued = bool(out) and out[-1][1].endswith("\\")
        if not continued and draw(st.integers(0, 12)) == 0:
            out.append((draw(st.integers(0, depth + 1)), draw(st.sampled_from(COMMENTS))))
        if not continued and draw(st.integers(0, 15)) == 0:
            out.append((0, ""))
        if not text.endswith("\\") and draw(st.integers(0, 15)) == 0:
            text = f"{text}  {draw(st.sampled_from(COMMENTS))}"
        out.append((depth, text))
    return out


def render_lines(block: Sequence[Line], unit: str, form_feeds: Sequence[int]) -> str:
    """Source text with `\\n` newlines; the lines whose index is in `form_feeds` start
    with a form feed (which Python allows before indentation)."""
    out = []
    for index, (depth, text) in enumerate(block):
        prefix = "\f" if index in form_feeds and text else ""
        out.append(f"{prefix}{unit * depth}{text}" if text else "")
    return "\n".join(out) + "\n"


@st.composite
def file_form(draw, text: str) -> Program:
    """The text with a newline style, maybe a BOM or coding cookie: stored as bytes."""
    newline = draw(st.sampled_from(NEWLINES))
    encoding, bom = "utf-8", False
    form = draw(st.sampled_from(("plain", "plain", "bom", "cookie-utf8", "cookie-latin1")))
    if form == "bom":
        bom = True
    elif form == "cookie-utf8":
        text = "# -*- coding: utf-8 -*-\n" + text
    elif form == "cookie-latin1":
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            pass
        else:
            text, encoding = "# -*- coding: latin-1 -*-\n" + text, "latin-1"
    if newline != "\n":
        text = text.replace("\n", newline)
    return Program(text, encoding, bom)


@st.composite
def torch_programs(draw) -> Program:
    """A PyTorch-shaped module built from the rules' trigger fragments."""
    header = draw(torch_header())
    body: Block = []
    for fragment_header, fragment_body in draw(st.lists(FRAGMENTS, min_size=1, max_size=4)):
        header += fragment_header
        body += draw(wrapped(fragment_body)) if draw(st.integers(0, 4)) == 0 else fragment_body
    preamble: Block = []
    if draw(st.booleans()):
        preamble.append((0, draw(st.sampled_from(('"""Docstring."""', "'''Módulo.'''", "from __future__ import annotations")))))
    if draw(st.integers(0, 9)) == 0:
        preamble.append((0, draw(st.sampled_from(("# torchlint: noqa: TL002", "x = '# torchlint: noqa'")))))
    support = lines("import contextlib, functools", "import numpy as np")
    block = draw(decorate(preamble + header + support + body))
    unit = draw(st.sampled_from(INDENTS))
    form_feeds = draw(st.sets(st.integers(0, len(block) - 1), max_size=2)) if draw(st.integers(0, 5)) == 0 else ()
    text = render_lines(block, unit, form_feeds)
    return draw(file_form(text))


def _top_level_line_starts(text: str) -> List[int]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    starts = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        if node.col_offset == 0:
            starts.append(first - 1)
    return starts


def salt(base: str, header: Block, body: Block, position: int, unit: str) -> Optional[str]:
    """`base` with the fragment's header first and its body before the top-level
    statement number `position` (or at the end); None if that does not compile."""
    base_lines = base.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    starts = _top_level_line_starts(base)
    cut = starts[position] if position < len(starts) else len(base_lines)
    fragment_header = render_lines(header, unit, ())
    fragment_body = render_lines(body, unit, ())
    candidates = (
        fragment_header + "\n".join(base_lines[:cut]) + "\n" + fragment_body + "\n".join(base_lines[cut:]),
        "\n".join(base_lines) + "\n" + fragment_header + fragment_body,
    )
    for text in candidates:
        if compiles(text):
            return text
    return None


@lru_cache(maxsize=None)
def hypothesmith_modules() -> st.SearchStrategy:
    """hypothesmith's modules, from its grammar and from LibCST nodes (building the
    grammar's parser takes seconds: once per process)."""
    import hypothesmith

    return st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())


@st.composite
def salted_hypothesmith(draw) -> Program:
    """An arbitrary module from hypothesmith with rule fragments inserted among its
    top-level statements."""
    base = draw(hypothesmith_modules())
    header = draw(torch_header()) + lines("import contextlib, functools", "import numpy as np")
    body: Block = []
    for fragment_header, fragment_body in draw(st.lists(FRAGMENTS, min_size=1, max_size=2)):
        header += fragment_header
        body += fragment_body
    position = draw(st.integers(0, 20))
    text = salt(base, header, body, position, draw(st.sampled_from(INDENTS)))
    if text is None:  # the base did not take the fragments (a `from __future__` first, ...)
        text = render_lines(header + body, "    ", ())
    return draw(file_form(text))
