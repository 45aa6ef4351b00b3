"""What the code means, each concept once (see DESIGN.md): one module per concept."""
