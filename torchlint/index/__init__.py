"""The typed per-file facts the project pass reads: one record per file (cached once), the
project's import graph, and the one resolver of pending findings."""
