"""TL001 heavy-import-at-module-level.

- `rule.py`: the rule (declaration, doc, the module-level candidates, what is reported) and its fix;
- `heavy_modules.py`: the modules to import lazily (options, defaults) and the stdlib-ast gate and facts;
- `name_uses.py`: where each imported name is read (function bodies, import time, annotations);
- `reached_by_name.py`: the ways a module's attribute is reached by name (`__all__`, `getattr`, strings);
- `import_edits.py`: the text of the moved imports and where they go in a function;
- `examples.py`: the code the tests run.
"""
