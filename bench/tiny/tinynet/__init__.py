"""A tiny PyTorch-style package: the benchmark's smoke-test corpus (bench/run.py --tree)."""
