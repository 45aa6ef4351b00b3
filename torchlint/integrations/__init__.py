"""What runs torchlint besides its CLI: the flake8 plugin and the language server."""
