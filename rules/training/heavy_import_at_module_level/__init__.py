"""TL001 heavy-import-at-module-level.

- `rule.py`: the rule (declaration, doc, what is reported, in the file or the project pass) and its fix;
- `candidates.py`: the module-level statements that import a lazy module, and the names they bind;
- `heavy_modules.py`: the modules to import lazily (options, defaults) and the stdlib-ast gate and facts;
- `name_uses.py`: where each imported name is read (function bodies, import time, annotations);
- `reached_by_name.py`: the ways a module's attribute is reached by name (`__all__`, `getattr`, strings);
- `import_edits.py`: the text of the moved imports and where they go in a function;
- `examples.py`: the code the tests run.
"""
