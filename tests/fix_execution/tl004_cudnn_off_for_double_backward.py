# fix: TL004 --unsafe-fixes
# expect: same
# cpu: the failure this prevents is cuDNN's (CUDA only); on CPU the wrapped call must give
# the same values and second-order gradients, which is what the doc says of CPU.
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4, batch_first=True)

    def forward(self, x):
        out, _ = self.rnn(x)
        return out[:, -1].sum(-1)


def gradient_penalty(critic, real):
    real.requires_grad_(True)
    grad, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


torch.manual_seed(0)
critic = Critic()
penalty = gradient_penalty(critic, torch.randn(2, 5, 3))
penalty.backward()
print("penalty:", round(penalty.item(), 6))
print("weight grad:", round(critic.rnn.weight_ih_l0.grad.abs().sum().item(), 6))
