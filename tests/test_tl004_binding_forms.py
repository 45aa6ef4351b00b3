"""TL004 follows a critic through every binding form its flow reads (issue 22, item 6):
built in `train.py`, differentiated twice by `gradient_penalty` in `penalty.py`."""

from __future__ import annotations

import json

import pytest

from cli_support import write_tree
from torchlint import cli

CRITIC = (  # an LSTM critic, as other TL004 tests use it
    "class Critic(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.rnn = nn.LSTM(8, 8, batch_first=True)\n\n"
    "    def forward(self, x):\n"
    "        return self.rnn(x)[0].mean()\n"
)
MODELS = (
    "from torch import nn\n\n\n"
    + CRITIC
    + "\n\n"
    "class Generator(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.head = nn.Linear(8, 8)\n\n"
    "    def forward(self, z):\n"
    "        return self.head(z)\n"
)
PENALTY = (
    "import torch\n\n\n"
    "def gradient_penalty(critic, real, fake):\n"
    "    mixed = (real + fake).requires_grad_(True)\n"
    "    (grads,) = torch.autograd.grad(critic(mixed), mixed, create_graph=True)\n"
    "    return grads.norm()\n"
)
HEADER = "import torch\n\nfrom .models import Critic, Generator\nfrom .penalty import gradient_penalty\n\n\n"

BINDINGS = {
    "tuple": "def train(real, fake, device):\n"
    "    critic, gen = Critic().to(device), Generator().to(device)\n"
    "    return gradient_penalty(critic, real, gen(fake))\n",
    "nested-tuple": "def train(real, fake):\n"
    "    (gen, (critic, _)) = Generator(), (Critic(), None)\n"
    "    return gradient_penalty(critic, real, gen(fake))\n",
    "starred": "def train(real, fake):\n"
    "    gen, *critics = Generator(), Critic(), Critic()\n"
    "    return gradient_penalty(critics[0], real, gen(fake))\n",
    "for-target": "def train(batches):\n"
    "    for critic in [Critic().cuda()]:\n"
    "        for real, fake in batches:\n"
    "            gradient_penalty(critic, real, fake)\n",
    "for-enumerate": "def train(real, fake):\n"
    "    for index, critic in enumerate([Critic(), Critic()]):\n"
    "        gradient_penalty(critic, real, fake)\n",
    "with-as": "def train(real, fake, build):\n"
    "    with Critic() as critic:\n"
    "        return gradient_penalty(critic, real, fake)\n",
    "walrus": "def train(real, fake):\n"
    "    if (critic := Critic().cuda()) is not None:\n"
    "        return gradient_penalty(critic, real, fake)\n",
    "chain": "def train(real, fake, device):\n"
    "    critic = Critic().to(device).train()\n"
    "    critic.cuda()\n"
    "    return gradient_penalty(critic, real, fake)\n",
    "module-level-tuple": "critic, gen = Critic().cuda(), Generator().cuda()\n\n\n"
    "def train(real, fake):\n"
    "    return gradient_penalty(critic, real, gen(fake))\n",
}


def _tl004(tmp_path, capsys, train: str, one_file: bool = False):
    if one_file:  # the penalty in the training file: the in-file flow (LibCST) decides
        files = {"gan/train.py": MODELS + "\n\n" + PENALTY.replace("import torch\n", "") + "\n\n" + train}
        files["gan/train.py"] = "import torch\n" + files["gan/train.py"]
    else:
        files = {"gan/models.py": MODELS, "gan/penalty.py": PENALTY, "gan/train.py": HEADER + train}
    write_tree(tmp_path, {"gan/__init__.py": "", **files})
    capsys.readouterr()
    code = cli.main(["check", "--no-cache", "--select", "TL004", "--output-format", "json", str(tmp_path / "gan")])
    found = json.loads(capsys.readouterr().out)
    return code, [(item["filename"].rsplit("/", 1)[-1], item["location"]["row"]) for item in found]


@pytest.mark.parametrize("form", sorted(BINDINGS))
def test_a_critic_bound_in_any_form_is_followed_across_files(form, tmp_path, capsys):
    code, found = _tl004(tmp_path, capsys, BINDINGS[form])
    assert code == 1
    assert found == [("models.py", 7)]


@pytest.mark.parametrize("form", sorted(BINDINGS))
def test_a_critic_bound_in_any_form_is_followed_within_a_file(form, tmp_path, capsys):
    code, found = _tl004(tmp_path, capsys, BINDINGS[form], one_file=True)
    assert code == 1
    assert found == [("train.py", 8)]


def test_a_generator_bound_beside_the_critic_is_not_the_critic(tmp_path, capsys):
    train = (
        "def train(real, fake, device):\n"
        "    critic, gen = Generator().to(device), Critic().to(device)\n"
        "    return gradient_penalty(critic, real, fake)\n"
    )
    code, found = _tl004(tmp_path, capsys, train)
    assert (code, found) == (0, [])
