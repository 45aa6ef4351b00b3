"""The engine (prefilter, sites, parse, one traversal, suppressions), the rule API and its bases, the registry and config."""
