"""TL005 implicit-host-sync-in-hot-path.

- `rule.py`: the rule (declaration, doc, the implicit syncs of a hot method);
- `tensor_calls.py`: the calls it knows and its option names;
- `control_flow.py`: where a tested value sits in control flow (loops, checks that raise or tell);
- `examples.py`: the code the tests run.

Cost: see each module; per method one pass over its own nodes and its parents (shared with TL003).
"""
