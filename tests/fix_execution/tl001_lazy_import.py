# fix: TL001
# config: [tool.torchlint.heavy-import-at-module-level]
# config: extend-lazy-imports = ["fractions"]
# expect: same
import fractions


def half(n):
    return fractions.Fraction(n, 2)


print("half:", half(3))
