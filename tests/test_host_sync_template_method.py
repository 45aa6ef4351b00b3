"""TL003 through the real CLI on the template method of RL and trainer libraries: a base class's loop
calls `self.hook(...)` and its subclasses, in other files, override the hook with the backward pass and
the optimizer step. The base's loop runs a step on every iteration, so what it reads there is reported;
a hook whose overrides never step leaves the loop alone."""

from __future__ import annotations

from test_host_sync_across_files import check
from cli_support import write_tree

BASE = (
    "import torch\n\n\nclass Agent:\n"
    "    def train_epoch(self, loader):\n"
    "        for batch in loader:\n"
    "            loss = self.train_step(batch)\n"
    "            self.losses.append(loss.item())\n"  # 8
    "{stub}"
)
STUB = "\n    def train_step(self, batch):\n        raise NotImplementedError\n"
STEPPING = (
    "import torch\n\nfrom pkg.base import Agent\n\n\nclass PPO(Agent):\n"
    "    def train_step(self, batch):\n"
    "        loss = self.model(batch).mean()\n"
    "        self.optimizer.zero_grad()\n"
    "        loss.backward()\n"
    "        self.optimizer.step()\n"
    "        return loss\n"
)
# the override reaches the step through a helper of its own, a second level below the base
HELPER = (
    "import torch\n\nfrom pkg.ppo import PPO\n\n\nclass ClippedPPO(PPO):\n"
    "    def train_step(self, batch):\n"
    "        loss = self.model(batch).mean()\n"
    "        self.apply_gradients(loss)\n"
    "        return loss\n\n"
    "    def apply_gradients(self, loss):\n"
    "        loss.backward()\n"
    "        self.optimizer.step()\n"
)
EVALUATING = (
    "import torch\n\nfrom pkg.base import Agent\n\n\nclass Scorer(Agent):\n"
    "    def train_step(self, batch):\n"
    "        with torch.no_grad():\n"
    "            return self.model(batch).mean()\n"
)


def locations(root):
    return [(d["filename"].rsplit("/", 1)[-1], d["location"]["row"]) for d in check(root, "--select", "TL003")]


def test_a_base_loop_whose_hook_a_subclass_overrides_with_a_step_is_a_training_loop(tmp_path):
    for stub in (STUB, ""):
        root = write_tree(tmp_path / str(bool(stub)), {
            "pkg/__init__.py": "", "pkg/base.py": BASE.format(stub=stub), "pkg/ppo.py": STEPPING,
        })
        assert locations(root) == [("base.py", 8)], stub


def test_an_override_that_steps_through_its_own_helper_counts_too(tmp_path):
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/base.py": BASE.format(stub=STUB), "pkg/ppo.py": EVALUATING.replace("Scorer", "PPO"),
        "pkg/clipped.py": HELPER,
    })
    assert locations(root) == [("base.py", 8)]


def test_a_hook_no_override_steps_leaves_the_base_loop_alone(tmp_path):
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/base.py": BASE.format(stub=STUB), "pkg/scorer.py": EVALUATING,
    })
    assert locations(root) == []
