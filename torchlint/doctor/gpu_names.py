"""NVIDIA marketing names -> compute capability. Data only.

Source: NVIDIA, "CUDA GPUs - Compute Capability", https://developer.nvidia.com/cuda-gpus
(and the legacy table linked from it for Kepler/Maxwell parts). A name is matched
case-insensitively after dropping "NVIDIA" and "GeForce"; the first row whose pattern
matches wins, so specific names (A10G, 3080 Ti) come before families.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

# (regex searched in the cleaned name, "major.minor")
_ROWS: Tuple[Tuple[str, str], ...] = (
    # Blackwell
    (r"\bRTX\s*50[5-9]0\b|\bRTX\s*PRO\s*\d+\s*Blackwell|\bRTX\s*50\d0\s*Ti\b", "12.0"),
    (r"\bGB10\b|DGX\s*Spark", "12.1"),
    (r"\bB200\b|\bGB200\b", "10.0"),
    (r"\bB300\b|\bGB300\b", "10.3"),
    # Hopper
    (r"\bH100\b|\bH200\b|\bH800\b|\bH20\b|\bGH200\b", "9.0"),
    # Ada Lovelace
    (r"\bRTX\s*40[5-9]0\b|\bL40S?\b|\bL4\b|\bL20\b|\bRTX\s*[2-6]000\s*Ada\b|\bRTX\s*A?\d+\s*Ada", "8.9"),
    # Ampere
    (r"\bA100\b|\bA800\b|\bA30\b", "8.0"),
    (r"\bRTX\s*30[5-9]0\b|\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|\bRTX\s*A[2-6]000\b|\bA[2-6]000\b", "8.6"),
    (r"\bJetson\s*AGX\s*Orin|\bOrin\b", "8.7"),
    # Turing
    (r"\bRTX\s*20[6-8]0\b|\bGTX\s*16[5-6]0\b|\bMX[45]50\b|\bT4\b|\bTitan\s*RTX\b|\bQuadro\s*RTX\b|\bT[0-9]{3,4}\b", "7.5"),
    # Volta
    (r"\bV100\b|\bTitan\s*V\b|\bQuadro\s*GV100\b", "7.0"),
    (r"\bXavier\b", "7.2"),
    # Pascal
    (r"\bP100\b|\bQuadro\s*GP100\b", "6.0"),
    (r"\bGTX\s*10[5-8]0\b|\bTitan\s*Xp?\b\s*\(?Pascal|\bTitan\s*Xp\b|\bP40\b|\bP4\b|\bP6\b|\bQuadro\s*P\d+|\bMX[1-3]50\b", "6.1"),
    (r"\bJetson\s*TX2\b|\bTX2\b", "6.2"),
    # Maxwell
    (r"\bGTX\s*9[5-8]0\b|\bTitan\s*X\b|\bM40\b|\bM60\b|\bM6000\b|\bM4000\b", "5.2"),
    (r"\bGTX\s*7[45]0\b|\bM10\b|\bGTX\s*9[46]0M\b|\bGTX\s*8[56]0M\b", "5.0"),
    (r"\bJetson\s*Nano\b|\bTX1\b", "5.3"),
    # Kepler
    (r"\bK80\b", "3.7"),
    (r"\bK40\b|\bK20X?\b|\bGTX\s*780\b|\bTitan\s*(?:Black|Z)\b", "3.5"),
    (r"\bGTX\s*6[5-9]0\b|\bGTX\s*7[67]0\b|\bK10\b|\bGT\s*6[45]0M\b", "3.0"),
)
_COMPILED = tuple((re.compile(pattern, re.IGNORECASE), capability) for pattern, capability in _ROWS)
_NOISE = re.compile(r"\b(?:NVIDIA|GeForce|Tesla)\b", re.IGNORECASE)


def capability_of(name: str) -> Optional[str]:
    """The compute capability ("8.6") of a GPU named as nvidia-smi or torch names it, or None."""
    cleaned = " ".join(_NOISE.sub(" ", name.replace("-", " ")).split())
    for pattern, capability in _COMPILED:
        if pattern.search(cleaned):
            return capability
    return None
