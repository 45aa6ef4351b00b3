"""torchlint's rules, grouped by family (training, torch_api, api_misuse, numerics_and_data);
a small rule is one module, a large one a package (installed as `torchlint.rules`)."""
