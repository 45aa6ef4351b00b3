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


# the base steps in its own step function and calls a hook; a subclass's override of the hook hands the batch's
# losses to a helper of its own that reads them; the base is imported through the package's __init__
TRAINER = (
    "import torch\n\n\nclass Trainer:\n"
    "    def train_step(self, batch):\n"
    "        loss = self.calculate_loss(batch)\n"
    "        loss.backward()\n"
    "        self.optimizer.step()\n\n"
    "    def calculate_loss(self, batch):\n"
    "        return self.model(batch).mean()\n"
)
DETECTION = (
    "import torch\n\nfrom pkg import Trainer\n\n\nclass DetectionTrainer(Trainer):\n"
    "    def calculate_loss(self, batch):\n"
    "        losses = self.model(batch)\n"
    "        self._track(losses)\n"
    "        return sum(losses.values())\n\n"
    "    def _track(self, losses):\n"
    "        for name, value in losses.items():\n"
    "            self.trackers[name].update(value.mean().item())\n"  # 14
)


def test_a_helper_an_override_calls_is_reached_through_the_override(tmp_path):
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "from pkg.trainer import Trainer\n", "pkg/trainer.py": TRAINER,
        "examples/detection.py": DETECTION,
    })
    found = check(root, "--select", "TL003")
    assert [(d["filename"].rsplit("/", 1)[-1], d["location"]["row"]) for d in found] == [("detection.py", 14)]
    assert "via `DetectionTrainer.calculate_loss` -> `DetectionTrainer._track`" in found[0]["message"]


# what a policy's learn() returns for the trainer to log: a stats record built from numbers
POLICY_BASE = (
    "import torch\n\n\nclass BasePolicy:\n"
    "    def update(self, batch):\n"
    "        stats = self.learn(batch)\n"
    "        self.optim.step()\n"
    "        return stats\n"
)
DQN = (
    "import torch\n\nfrom pkg.base import BasePolicy\n\n\nclass DQNPolicy(BasePolicy):\n"
    "    def learn(self, batch):\n"
    "        loss = self.model(batch).mean()\n"
    "        loss.backward()\n"
    "        return DQNTrainingStats(loss=loss.item())\n"  # 10
    "\n    def lengths(self, batch):\n"
    "        return make_batch(size=batch.max().item())\n"
)


def test_a_number_returned_in_a_stats_record_is_a_record(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": POLICY_BASE, "pkg/dqn.py": DQN})
    assert locations(root) == [("dqn.py", 10)]
