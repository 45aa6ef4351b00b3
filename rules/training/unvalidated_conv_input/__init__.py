"""TL002 unvalidated-conv-input: the rule, its doc and its report and fix (rule.py); the
names, options and tracked values it shares (values.py); what it reads from one
expression or statement (expressions.py); the walk of `forward` (forward.py); what the
rest of the file says about a module's inputs (outside.py); the stdlib-ast gate and
facts (gate.py); and the examples the tests run (examples.py).
"""
