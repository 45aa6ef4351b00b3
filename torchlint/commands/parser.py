"""argparse for every subcommand, with errors as one line and exit code 2."""

from __future__ import annotations

import argparse
from typing import NoReturn


class UsageError(Exception):
    """A bad command line (or file named on it); the message is one line."""


class OneLineParser(argparse.ArgumentParser):
    """Raises UsageError instead of printing the usage block and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)
