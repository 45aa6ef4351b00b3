"""TL004 cudnn-rnn-double-backward.

- `rule.py`: the rule (declaration, doc, the traversal, the file's findings and the project facts);
- `gate.py`: the stdlib-ast gate (whether a file builds an RNN or differentiates twice);
- `double_backward_calls.py`: a second-order call as the traversal records it;
- `examples.py`: the code the tests run.
"""
