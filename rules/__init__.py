"""torchlint's rules, one module per rule (installed as `torchlint.rules`)."""
