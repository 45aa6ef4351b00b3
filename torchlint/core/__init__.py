"""The ground every layer stands on: source and syntax (bounded reads, decoding, parsing,
walks, positions, noqa), config and the declared runtime requirements, diagnostics, and
the one-line messages on stderr."""
