"""torchlint explain: match a log or traceback against known runtime error signatures.

The knowledge base is data (`signatures.toml` in this package); `knowledge` loads and
matches it, `render` prints matches, `cli` is the command.
"""
