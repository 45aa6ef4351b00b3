"""torchlint: a static analyser and autofixer for PyTorch code."""

__version__ = "0.1.0"
