"""TL2xx: unsafe or wrong use of an API (torch.load, checkpointing, torchvision weights, environment settings)."""
