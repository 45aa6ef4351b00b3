"""What the code means, each concept once (one module per concept), in its stdlib-ast and
LibCST forms side by side where both are needed."""
