"""The bases a rule can extend besides `torchlint.rule_api.rule.Rule`, for families of rules
that share their sites, their traversal or their fixes: `TorchExpressionRule` (one torch
expression rewritten in place), `TorchApiRule` (rows of the deprecated and non-public
API table), `HotPathRule` (what methods reached from a hot path must not do),
`TorchLoadRule` (what a `torch.load` unpickles, and from where) and the mixin
`CompatGuarded` (code a compatibility guard picks for older releases is not reported).

Cost: see each base.
"""
