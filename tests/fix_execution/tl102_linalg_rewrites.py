# fix: TL102
# expect: same
import torch

torch.manual_seed(0)
a = torch.randn(4, 4, dtype=torch.float64)
spd = a @ a.T + 4 * torch.eye(4, dtype=torch.float64)
q, r = torch.qr(a, some=False)
print("qr:", round((q @ r - a).abs().max().item(), 9), tuple(q.shape), q.dtype)
L = torch.cholesky(spd, upper=True)
print("cholesky:", [round(v, 6) for v in L.flatten().tolist()])
print("chain:", [round(v, 6) for v in torch.chain_matmul(a, a, a).flatten().tolist()])
lu, piv = torch.lu(a)
x = torch.lu_solve(torch.ones(4, 1, dtype=torch.float64), lu, piv)
print("lu_solve:", [round(v, 6) for v in x.flatten().tolist()])
print("range:", torch.range(0, 4).tolist(), torch.range(10, 2, -2, dtype=torch.long).tolist())
