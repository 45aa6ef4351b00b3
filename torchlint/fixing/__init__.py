"""Edits: applying fixes to a fixpoint, the guard that proves them, layout within the line length, import edits, atomic writes, --add-noqa."""
