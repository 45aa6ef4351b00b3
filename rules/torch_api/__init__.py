"""TL1xx: deprecated, removed and non-public PyTorch APIs."""
