"""The instance-flow facts of one file, as the file record keeps them: the calls of
functions of the linted tree with what their arguments carry, what each module-level
function returns, and a package `__init__`'s import table
(`torchlint.analysis.instance_flow.instance_flow` builds them,
`torchlint.analysis.flow_graph.InstanceFlow` answers over them).

A value is a tuple of sources (see `torchlint.analysis.instance_flow`). Named tuples,
their names interned when decoded: a parallel run's parent holds every file's facts at
once, and the same names recur across files.

Cost: encoding and decoding are linear in the facts.
"""

from __future__ import annotations

from sys import intern
from typing import Mapping, NamedTuple, Tuple, Union


class FlowArgument(NamedTuple):
    """An argument of a call: its position or keyword, and what it carries."""

    key: Union[int, str]
    sources: Tuple[str, ...]


class FlowCall(NamedTuple):
    """A call of a function the tree may define (`callee`, absolute) made by `caller`
    (its qualified name, "" for the module's own code)."""

    callee: str
    caller: str
    arguments: Tuple[FlowArgument, ...]

    def to_json(self) -> list:
        return [self.callee, self.caller, [[argument.key, list(argument.sources)] for argument in self.arguments]]

    @classmethod
    def from_json(cls, data: list) -> "FlowCall":
        callee, caller, arguments = data
        return cls(
            intern(callee),
            intern(caller),
            tuple(FlowArgument(key, tuple(map(intern, sources))) for key, sources in arguments),
        )


class FlowFunction(NamedTuple):
    """A module-level function: its parameters and the sources of what it returns."""

    parameters: Tuple[str, ...]
    returns: Tuple[str, ...]


class FlowFacts(NamedTuple):
    calls: Tuple[FlowCall, ...]
    # absolute name -> the function
    functions: Mapping[str, FlowFunction]
    # a package `__init__`'s import table (empty for another module)
    exports: Mapping[str, str]

    def to_json(self) -> list:
        functions = {name: [list(function.parameters), list(function.returns)] for name, function in self.functions.items()}
        return [[call.to_json() for call in self.calls], functions, dict(self.exports)]

    @classmethod
    def from_json(cls, data: list) -> "FlowFacts":
        calls, functions, exports = data
        return cls(
            tuple(FlowCall.from_json(call) for call in calls),
            {
                intern(name): FlowFunction(tuple(map(intern, parameters)), tuple(map(intern, returns)))
                for name, (parameters, returns) in functions.items()
            },
            dict(exports),
        )
