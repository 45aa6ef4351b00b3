"""TL003 host-sync-in-hot-path.

- `rule.py`: the rule (declaration, doc, the walk of a hot method) and its fixes;
- `syncs.py`: what counts as an explicit sync, on LibCST and on the stdlib ast (the gate);
- `value_uses.py`: where a synced value goes (recorded, arithmetic only, needed on the host);
- `lightning_log.py`: the values given to Lightning's `self.log` / `self.log_dict`;
- `examples.py`: the code the tests run.

Cost: see each module; per owner (method, function, module code) one pass over its own nodes and one over its parents, then O(depth) per sync (value uses and accumulators memoized per name).
"""
