"""The rule API (`Rule`, `RuleContext`, `Invalid`), the bases shared by families of rules,
the fix groups they share, and the registry that finds every rule under `torchlint.rules`."""
