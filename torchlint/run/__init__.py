"""Running a check on many files: discovery, notebooks as sources, the per-file pass cached
and in parallel, the cache on untrusted ground, the baseline, the project pass and its fixes."""
