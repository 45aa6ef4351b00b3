"""Score `torchlint explain` on the real-log corpus: `python bench/explain_corpus.py dev|held-back [--table]`.

Prints the hit rate of the split and, with --table, one row per log (id, URL, expected, got, pass).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "explain"))

from corpus import score  # noqa: E402


def main(argv):
    split = argv[0] if argv else "dev"
    outcomes = score(split)
    gpu = [o for o in outcomes if o.case.gpu]
    non_gpu = [o for o in outcomes if not o.case.gpu]
    if "--table" in argv:
        print("| id | URL | expected | got | pass |")
        print("|---|---|---|---|---|")
        for o in outcomes:
            expected = f"`{o.case.expect}`" if o.case.gpu else "no GPU claim"
            got = o.got if o.case.gpu else ("GPU claim: " + str(o.got) if o.gpu_claim else f"no claim ({o.got})")
            print(f"| {o.case.id} | {o.case.url} | {expected} | {got} | {'yes' if o.passed else 'NO'} |")
    passed = sum(o.passed for o in outcomes)
    print(f"{split}: {passed}/{len(outcomes)} = {100 * passed / len(outcomes):.1f} % "
          f"(GPU logs {sum(o.passed for o in gpu)}/{len(gpu)}, non-GPU logs without a GPU claim "
          f"{sum(o.passed for o in non_gpu)}/{len(non_gpu)})")


if __name__ == "__main__":
    main(sys.argv[1:])
