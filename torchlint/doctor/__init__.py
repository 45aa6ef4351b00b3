"""torchlint doctor: probe the CUDA/cuDNN environment, check it, and smoke-test it.

Three parts that never mix: `probe` collects facts (it never judges), `check` turns
facts and declared requirements into results (pure functions), and `smoke` runs tiny
GPU programs, each in its own child process. Nothing here imports torch at import time.
"""
