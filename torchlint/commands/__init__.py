"""One module per `torchlint` subcommand."""

# name -> one-line summary, in the order `torchlint --help` lists them
COMMANDS = {
    "check": "Lint (and fix) files and directories; the default: `torchlint PATHS`",
    "rule": "Show a rule's documentation, or list every rule",
    "doctor": "Check this machine's torch, CUDA, cuDNN, driver and GPU against the project",
    "explain": "Explain a CUDA/cuDNN error log or traceback",
    "server": "Run the language server (LSP over stdio) for editors",
    "clean": "Remove the project's cache (.torchlint_cache/)",
    "help": "Print this message or the help of the given command",
}
