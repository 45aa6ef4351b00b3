"""Score `torchlint explain` on the real-log corpora.

`python bench/explain_corpus.py splits` prints every split side by side: the development and
held-back parts of tests/explain/real/ (together "rest") and each held-out split (held-out-N in
tests/explain/heldoutN/, held-out-1 in tests/explain/heldout/), each with its verdicts (right, partial,
wrong, nothing) and over-claims, and under the table how each held-out split was used.
`python bench/explain_corpus.py dev|held-back|held-out|held-out-N [--table]` prints one split's hit
rate and, with --table, one row per log (id, URL, expected, got, verdict, over-claims); `held-out`
is the newest held-out split not yet used to write knowledge.
"""

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "explain"))

from corpus import DEV, HELD_BACK, HELD_OUT, HELD_OUT_SPLITS, RIGHT, VERDICTS, score, split_name  # noqa: E402

REST = "rest"  # the development and held-back parts together


def _percent(part, whole):
    return f"{100 * part / whole:.1f} %" if whole else "-"


def splits_table(by_split):
    """Markdown: one column per split (and "rest"), one row per verdict and kind of over-claim."""
    columns = list(by_split)
    verdicts = {name: Counter(o.verdict for o in outcomes) for name, outcomes in by_split.items()}
    claims = {name: Counter(claim for o in outcomes for claim in o.over_claims) for name, outcomes in by_split.items()}
    rows = [("logs", {name: len(outcomes) for name, outcomes in by_split.items()})]
    rows += [(verdict, {name: verdicts[name][verdict] for name in columns}) for verdict in VERDICTS]
    rows.append(("right %", {name: _percent(verdicts[name][RIGHT], len(by_split[name])) for name in columns}))
    rows.append(("logs with an over-claim", {name: sum(bool(o.over_claims) for o in by_split[name])
                                             for name in columns}))
    kinds = sorted({kind for counter in claims.values() for kind in counter})
    rows += [(f"  {kind}", {name: claims[name][kind] for name in columns}) for kind in kinds]
    lines = ["| | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {label} | " + " | ".join(str(values[name]) for name in columns) + " |" for label, values in rows]
    return "\n".join(lines)


def split_table(outcomes):
    """Markdown: one row per log of a split."""
    lines = ["| id | URL | expected | got | verdict | over-claims |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        expected = "`" + o.case.expect.replace("|", "\\|") + "`" if o.case.expect else "no GPU claim"
        got = o.got if o.case.gpu else ("GPU claim: " + str(o.got) if o.gpu_claim else f"no claim ({o.got})")
        lines.append(f"| {o.case.id} | {o.case.url} | {expected} | {got} | {o.verdict} | "
                     f"{', '.join(o.over_claims) or '-'} |")
    return "\n".join(lines)


def summary(split, outcomes):
    gpu = [o for o in outcomes if o.case.gpu]
    non_gpu = [o for o in outcomes if not o.case.gpu]
    passed = sum(o.passed for o in outcomes)
    return (f"{split}: {passed}/{len(outcomes)} = {_percent(passed, len(outcomes))} "
            f"(GPU logs {sum(o.passed for o in gpu)}/{len(gpu)}, non-GPU logs without a GPU claim "
            f"{sum(o.passed for o in non_gpu)}/{len(non_gpu)}, logs with an over-claim "
            f"{sum(bool(o.over_claims) for o in outcomes)})")


def held_out_notes():
    """One line per held-out split: how it was used, or that it is the live one."""
    live = split_name(HELD_OUT)
    return "\n".join(f"{split.name}: {split.used}" if split.used else
                     f"{split.name}: {'live, never written from (`held-out` names it)' if split.name == live else 'unused'}"
                     for split in HELD_OUT_SPLITS)


def main(argv):
    split = argv[0] if argv else DEV
    if split == "splits":
        dev, held_back = score(DEV), score(HELD_BACK)
        by_split = {DEV: dev, HELD_BACK: held_back, REST: dev + held_back}
        by_split.update((held_out.name, score(held_out.name)) for held_out in HELD_OUT_SPLITS)
        print(splits_table(by_split))
        print()
        print(held_out_notes())
        return
    outcomes = score(split)
    if "--table" in argv:
        print(split_table(outcomes))
    print(summary(split_name(split), outcomes))


if __name__ == "__main__":
    main(sys.argv[1:])
