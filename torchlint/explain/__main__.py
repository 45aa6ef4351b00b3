import sys

from torchlint.explain.cli import main

sys.exit(main(sys.argv[1:]))
