"""argparse for every subcommand, with errors as one line and exit code 2."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Callable, NoReturn, Tuple, Type

from torchlint.core.console import did_you_mean

EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class UsageError(Exception):
    """A bad command line (or file named on it); the message is one line."""


class OneLineParser(argparse.ArgumentParser):
    """Raises UsageError instead of printing the usage block and exiting."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            options = [flag for flag in self._option_string_actions if flag.startswith("--")]
            unknown = [word.split("=")[0] for word in message.split(": ", 1)[1].split() if word.startswith("--")]
            message += "".join(did_you_mean(word, options) for word in unknown[:1])
        raise UsageError(message)


def one_line(text: str) -> str:
    return " ".join(text.split())


def run_guarded(prog: str, run: Callable[[], int], expected: Tuple[Type[Exception], ...] = (UsageError,)) -> int:
    """Run a subcommand: an expected error is one line and exit 2, ^C is 130 and SIGTERM
    143 (workers stopped, temp files removed), a closed pipe (`... | head`) is not an
    error, and nothing ever prints a traceback."""
    from torchlint.core.console import error
    from torchlint.core.interrupts import Terminated, raise_on_sigterm
    from torchlint.fixing.write import remove_temp_files

    previous = raise_on_sigterm()
    try:
        return run()
    except expected as problem:
        error(one_line(str(problem)))  # `error: ...`, as every command's usage errors begin
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"{prog}: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush is quiet
        return 0
    except Exception as error:  # the promise is: never a traceback
        print(f"{prog}: internal error: {type(error).__name__}: {one_line(str(error))}", file=sys.stderr)
        return 2
    finally:
        remove_temp_files()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

