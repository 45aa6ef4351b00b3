import sys

from torchlint.doctor.cli import main

sys.exit(main(sys.argv[1:]))
