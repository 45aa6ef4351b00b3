"""What runs torchlint besides its CLI: the flake8 plugin, Jupyter notebooks as sources, the language server."""
