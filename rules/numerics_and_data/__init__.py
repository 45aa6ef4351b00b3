"""TL3xx: numerics and data loading."""
