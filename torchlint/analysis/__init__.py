"""What the code means, each concept once, in its stdlib-ast and LibCST forms side by side."""
