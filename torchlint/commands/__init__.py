"""One module per `torchlint` subcommand."""
