"""TL004's examples: code the rule must leave alone, and code it must flag (with the fixed text)."""

from __future__ import annotations

from torchlint.rule_api.rule import Invalid

VALID = (
    # first-order backward only
    "import torch\nfrom torch import nn\n\nclass LM(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.rnn = nn.LSTM(8, 8)\n\n    def forward(self, x):\n"
    "        return self.rnn(x)[0]\n\ndef step(model, x):\n    model(x).sum().backward()\n\n"
    "step(LM(), torch.zeros(2, 3, 8))\n",
    # double backward on a model without RNN
    "import torch\n\nnet = torch.nn.Linear(4, 1)\nx = torch.ones(2, 4, requires_grad=True)\n"
    "g, = torch.autograd.grad(net(x).sum(), x, create_graph=True)\n",
    # an unrelated RNN in the same file
    "import torch\nimport torch.nn as nn\n\ndef make_lm():\n    return nn.GRU(4, 4)\n\n"
    "def penalty(net, x):\n    g, = torch.autograd.grad(net(x).sum(), x, create_graph=True)\n    return g\n\n"
    "def main(x):\n    lm = make_lm()\n    lm(x)[0].sum().backward()\n    return penalty(nn.Linear(4, 1), x)\n",
    # create_graph that cannot be true
    "import torch\nrnn = torch.nn.RNN(4, 4)\nx = torch.ones(3, 1, 4, requires_grad=True)\n"
    "flag = False\ng, = torch.autograd.grad(rnn(x)[0].sum(), x, create_graph=flag)\n",
    # the second-order call already runs with cuDNN off
    "import torch\nrnn = torch.nn.GRU(4, 4)\nx = torch.ones(3, 1, 4, requires_grad=True)\n"
    "with torch.backends.cudnn.flags(enabled=False):\n"
    "    g, = torch.autograd.grad(rnn(x)[0].sum(), x, create_graph=True)\n",
    # already fixed: the forward call is wrapped
    "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.rnn = nn.LSTM(4, 4)\n\n    def forward(self, x):\n"
    "        with torch.backends.cudnn.flags(enabled=False):\n            y, _ = self.rnn(x)\n"
    "        return y\n\ndef hess(x):\n    return torch.autograd.functional.hessian(lambda t: M()(t).sum(), x)\n",
    # a cell never uses cuDNN; not resolved by spelling either
    "import torch\ncell = torch.nn.LSTMCell(4, 4)\nLSTM = object\nrnn = LSTM()\n"
    "x = torch.ones(1, 4, requires_grad=True)\n"
    "g, = torch.autograd.grad(cell(x)[0].sum(), x, create_graph=True)\n",
    # a false default nobody in the file overrides
    "import torch\nrnn = torch.nn.GRU(4, 4)\n\ndef grads(x, create_graph=False):\n"
    "    return torch.autograd.grad(rnn(x)[0].sum(), x, create_graph=create_graph)\n",
    # a model passed in from nowhere, and an RNN held by no module class of the file
    "import torch\n\nrnn = torch.nn.LSTM(4, 4)\n\ndef jac(model, x):\n"
    "    return torch.autograd.grad(model(x).sum(), x, create_graph=True)\n",
    # the penalty's caller passes in another model
    "import torch\nfrom torch import nn\n\nclass LM(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.rnn = nn.GRU(4, 4)\n\n"
    "def penalty(critic, x):\n    return torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n\n"
    "penalty(critic=nn.Linear(4, 1), x=None)\n",
)

INVALID = (
    # MAML in one file: the learner arrives from no call site; the file's module holds an LSTM
    Invalid(
        "import torch\nfrom torch import nn\n\n\nclass Learner(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lstm = nn.LSTM(4, 8)\n\n    def forward(self, x):\n"
        "        return self.lstm(x)[0].sum()\n\n\n"
        "def inner_loop(learner, batch, lr=0.1):\n"
        "    grads = torch.autograd.grad(learner(batch), learner.parameters(), create_graph=True)\n"
        "    return [p - lr * g for p, g in zip(learner.parameters(), grads)]\n",
        line=8,
        column=21,
    ),
    # passed by keyword
    Invalid(
        "import torch\nfrom torch import nn\n\nclass Critic(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.rnn = nn.GRU(4, 4)\n\n"
        "def penalty(x, critic=None):\n    return torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n\n"
        "def step(x):\n    return penalty(critic=Critic(), x=x)\n",
        line=7,
        column=20,
    ),
    Invalid(
        "import torch\nfrom torch import nn\n\n\nclass Critic(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.rnn = nn.GRU(8, 16, batch_first=True)\n\n"
        "    def forward(self, x):\n        out, _ = self.rnn(x)  # the recurrent pass\n"
        "        return out[:, -1].sum(-1)\n\n\n"
        "def gradient_penalty(critic, real):\n    real.requires_grad_(True)\n"
        "    grad, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)\n"
        "    return ((grad.norm(2, dim=-1) - 1) ** 2).mean()\n\n\n"
        "def train_step(batch):\n    critic = Critic()\n    return gradient_penalty(critic, batch)\n",
        unsafe_fixed="import torch\nfrom torch import nn\n\n\nclass Critic(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.rnn = nn.GRU(8, 16, batch_first=True)\n\n"
        "    def forward(self, x):\n        with torch.backends.cudnn.flags(enabled=False):\n"
        "            out, _ = self.rnn(x)  # the recurrent pass\n"
        "        return out[:, -1].sum(-1)\n\n\n"
        "def gradient_penalty(critic, real):\n    real.requires_grad_(True)\n"
        "    grad, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)\n"
        "    return ((grad.norm(2, dim=-1) - 1) ** 2).mean()\n\n\n"
        "def train_step(batch):\n    critic = Critic()\n    return gradient_penalty(critic, batch)\n",
        line=8,
        column=20,
    ),
    # `import torch` is added; the call is reached through `self.encode`
    Invalid(
        '"""Energy model."""\nimport torch.nn as nn\nfrom torch.autograd import grad\n\n\n'
        "class Energy(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lstm = nn.LSTM(4, 4, num_layers=2)\n\n    def encode(self, x):\n"
        "        return self.lstm(x)[0]\n\n    def forward(self, x):\n        return self.encode(x).sum()\n\n"
        "    def score(self, x):\n        return grad(self(x), x, create_graph=True)[0]\n",
        unsafe_fixed='"""Energy model."""\nimport torch\nimport torch.nn as nn\nfrom torch.autograd import grad\n\n\n'
        "class Energy(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lstm = nn.LSTM(4, 4, num_layers=2)\n\n    def encode(self, x):\n"
        "        with torch.backends.cudnn.flags(enabled=False):\n"
        "            return self.lstm(x)[0]\n\n    def forward(self, x):\n        return self.encode(x).sum()\n\n"
        "    def score(self, x):\n        return grad(self(x), x, create_graph=True)[0]\n",
        line=9,
        column=21,
    ),
    # projected: flagged, no fix, even with cuDNN off at the call
    Invalid(
        "import torch\n\nlstm = torch.nn.LSTM(16, 32, proj_size=8)\n\n"
        "def penalty(x):\n    with torch.backends.cudnn.flags(enabled=False):\n"
        "        return torch.func.hessian(lambda t: lstm(t)[0].sum())(x)\n",
        line=3,
        column=8,
    ),
    # nested transforms through a name; a parameter passed as true in the file
    Invalid(
        "from torch.func import jacrev, functional_call\nfrom torch.nn import RNN as Recurrent\n\n"
        "net = Recurrent(2, 2)\n\ndef curvature(params, x):\n"
        "    first = jacrev(lambda p: functional_call(net, p, (x,))[0].sum())\n"
        "    return jacrev(first)(params)\n",
    ),
    Invalid(
        "import torch\n\nclass MyGRU(torch.nn.GRU):\n    pass\n\nrnn = MyGRU(4, 4)\n\n"
        "def grads(loss, x, create_graph=False):\n"
        "    return torch.autograd.grad(loss, x, create_graph=create_graph)\n\n"
        "def main(x):\n    return grads(rnn(x)[0].sum(), x, create_graph=True)\n",
        line=6,
        column=7,
    ),
    Invalid(
        "import torch\nimport torch.nn as nn\n\nclass Seq(nn.Module):\n    def __init__(self, **kw):\n"
        "        super().__init__()\n        self.rnn = nn.LSTM(4, 4, **kw)\n\n    def forward(self, x):\n"
        "        return self.rnn(x)[0]\n\ndef meta_step(model, x, second_order):\n"
        "    model(x).sum().backward(create_graph=second_order)\n\nmeta_step(Seq(), None, True)\n",
        line=7,
        column=20,
    ),
)
