# fix: TL003 --unsafe-fixes
# expect: differs beyond
# Hard-negative mining as detection and OCR losses write it, run on random maps (no positives,
# few, many) with the loss and its gradient printed: the same before and after (a slice past the
# end included). Only a `topk` count beyond the elements differs, as the doc says: `topk` raises,
# the masked sort takes them all.
import torch
from torch import nn


class BalanceCrossEntropyLoss(nn.Module):
    """The DBNet form with byte masks (easyocr's, mmocr's and the OCR fixture's share it)."""

    ratio = 3.0

    def forward(self, pred, gt, mask):
        pos = (gt * mask).byte()
        neg = ((1 - gt) * mask).byte()
        pos_count = int(pos.float().sum().item())
        neg_count = min(int(neg.float().sum().item()), int(pos_count * self.ratio))
        bce = nn.functional.binary_cross_entropy(pred, gt, reduction="none")
        pos_loss = bce * pos.float()
        neg_loss, _ = torch.topk((bce * neg.float()).view(-1), neg_count)
        return (pos_loss.sum() + neg_loss.sum()) / (pos_count + neg_count + 1e-6)


class BalanceL1Loss(nn.Module):
    def __init__(self, negative_ratio=3.0):
        super().__init__()
        self.negative_ratio = negative_ratio

    def forward(self, pred, gt, mask):
        loss = torch.abs(pred - gt)
        positive = loss * mask
        negative = loss * (1 - mask)
        positive_count = int(mask.sum().item())
        negative_count = min(int((1 - mask).sum().item()), int(positive_count * self.negative_ratio))
        negative_loss, _ = torch.topk(negative.view(-1), negative_count)
        negative_loss = negative_loss.sum() / negative_count
        positive_loss = positive.sum() / positive_count
        return positive_loss + negative_loss


class FallbackBalanceLoss(nn.Module):
    def __init__(self, negative_ratio=3, fallback_negative_num=5, eps=1e-6):
        super().__init__()
        self.negative_ratio = negative_ratio
        self.fallback_negative_num = fallback_negative_num
        self.eps = eps

    def forward(self, pred, gt, mask):
        positive = (gt * mask).float()
        negative = ((1 - gt) * mask).float()
        positive_count = int(positive.sum().item())
        if positive_count == 0:
            negative_count = min(int(negative.sum()), self.fallback_negative_num)
        else:
            negative_count = min(int(negative.sum()), int(positive_count * self.negative_ratio))
        loss = nn.functional.binary_cross_entropy(pred, gt, reduction="none")
        positive_loss = loss * positive
        negative_loss = loss * negative
        negative_loss, _ = torch.topk(negative_loss.view(-1), negative_count)
        return (positive_loss.sum() + negative_loss.sum()) / (positive_count + negative_count + self.eps)


class MaskedMeanLoss(nn.Module):
    def forward(self, pred, gt, mask):
        error = torch.abs(pred - gt) * mask
        count = max(int(mask.sum().item()), 1)
        return error.sum() / count


class HardestMeanLoss(nn.Module):
    def __init__(self, ratio=0.5):
        super().__init__()
        self.ratio = ratio

    def forward(self, scores, labels):
        losses = nn.functional.cross_entropy(scores, labels, reduction="none")
        k = int((labels == 0).sum().item() * self.ratio)
        return torch.topk(losses, k)[0].mean()


class OhemCrossEntropy(nn.Module):
    def __init__(self, keep_ratio=0.25, min_kept=4):
        super().__init__()
        self.keep_ratio = keep_ratio
        self.min_kept = min_kept

    def forward(self, logits, target):
        pixel_losses = nn.functional.cross_entropy(logits, target, reduction="none").view(-1)
        valid = int((target >= 0).sum().item())
        kept = max(int(valid * self.keep_ratio), self.min_kept)
        hardest, _ = torch.topk(pixel_losses, kept)
        return hardest.mean()


class SortedMiningLoss(nn.Module):
    def forward(self, loss, positive, negative):
        positive_count = int(positive.sum().item())
        ranked, _ = torch.sort((loss * negative).view(-1), descending=True)
        hardest = ranked[:3 * positive_count]
        return (loss * positive).sum() / max(positive_count, 1) + hardest.mean()


class InlineSliceLoss(nn.Module):
    def forward(self, loss, negative):
        k = int(negative.sum().item() * 0.5)
        ranked = loss.flatten().sort(descending=True).values
        return ranked[:k].sum()


def shown(value):
    return [round(v, 5) for v in value.reshape(-1).tolist()]


def run(loss_fn, *inputs):
    inputs = [x.clone().requires_grad_(x.is_floating_point() and i == 0) for i, x in enumerate(inputs)]
    loss = loss_fn(*inputs)
    loss.backward()
    return round(loss.item(), 5), shown(inputs[0].grad)


torch.manual_seed(0)
for case, positives in (("none", 0.0), ("few", 0.1), ("half", 0.5), ("all", 1.0)):
    pred = torch.rand(2, 1, 4, 4).clamp(0.01, 0.99)
    gt = (torch.rand(2, 1, 4, 4) < positives).float()
    mask = (torch.rand(2, 1, 4, 4) < 0.9).float()
    print(f"bce {case}:", *run(BalanceCrossEntropyLoss(), pred, gt, mask))
    print(f"l1 {case}:", *run(BalanceL1Loss(), pred, gt, gt))
    print(f"fallback {case}:", *run(FallbackBalanceLoss(), pred, gt, mask))
    print(f"masked mean {case}:", *run(MaskedMeanLoss(), pred, gt, gt))
    scores, labels = torch.randn(12, 3), (torch.rand(12) > positives).long() * torch.randint(0, 3, (12,))
    print(f"hardest {case}:", *run(HardestMeanLoss(), scores, labels))
    print(f"sorted slice {case}:", *run(SortedMiningLoss(), pred, gt, 1 - gt))
    print(f"inline slice {case}:", *run(InlineSliceLoss(), pred, 1 - gt))
    print(f"ohem {case}:", *run(OhemCrossEntropy(keep_ratio=positives), torch.randn(2, 3, 4, 4), torch.randint(0, 3, (2, 4, 4))))
try:
    beyond = run(HardestMeanLoss(ratio=1.5), torch.randn(6, 3), torch.zeros(6, dtype=torch.long))
except RuntimeError as error:
    beyond = type(error).__name__
print("beyond:", beyond)
