"""Running a check: discovery, the per-file pass cached and in parallel, the cache on untrusted ground, the project pass."""
