"""TL002 unvalidated-conv-input: the rule's declaration, doc and report (rule.py); its fix
(fix.py); the names, options and tracked values its parts share (values.py); what it
reads from one expression or statement (expressions.py); the walk of `forward`
(forward.py); which names of `forward` hold data from outside the module (outside.py);
the stdlib-ast gate and facts (gate.py); and the examples the tests run (examples.py).

Cost: see each module; per class with a `forward`, one walk of `forward` (forward.py) and of the class for its conv layers.
"""
