"""The typed per-file facts the project pass reads: one record per file, pending findings and the one resolver."""
