"""Which module instances reach a function's parameter, over every file's instance-flow
facts (`torchlint.analysis.flow_facts`): through every call site of the tree, the
parameters those callers pass on, package re-exports and the factories that return a
model (TL004's project pass).

Cost: indexing is linear in the facts (calls by the last part of their callee, functions
by the last part of their name); `function` is memoized and a miss looks only at the
functions sharing the name's last part (and at most 4 re-exports deep);
`instances_into` is a search over (function, parameter) pairs with a `seen` set, each
looking at the calls sharing the function's last name part; `returned` follows what a
factory returns, unmemoized, at most `FLOW_DEPTH` deep."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Set, Tuple

from torchlint.analysis.flow_facts import FlowCall, FlowFacts, FlowFunction
from torchlint.analysis.instance_flow import FLOW_DEPTH, PARAM
from torchlint.analysis.module_names import module_name, suffix_matches
from torchlint.analysis.module_targets import MAX_REEXPORTS, reexported


class InstanceFlow:
    """Every file's instance-flow facts (`flow_by_file`: display path -> facts), indexed:
    which sources reach a parameter."""

    def __init__(self, flow_by_file: Mapping[str, FlowFacts]) -> None:
        self.functions: Dict[str, FlowFunction] = {}
        self.exports: Dict[str, Tuple[str, bool, Mapping[str, str]]] = {}  # see module_targets.Exports
        # the last part of a callee's name -> its calls
        self._calls: Dict[str, List[FlowCall]] = {}
        self._resolved: Dict[str, Optional[str]] = {}  # dotted name -> the function it names
        self._by_last: Optional[Dict[str, List[str]]] = None  # last part -> function names
        for display, flow in flow_by_file.items():
            self.functions.update(flow.functions)
            if flow.exports:
                self.exports[module_name(display)] = (module_name(display), True, flow.exports)
            for call in flow.calls:
                self._calls.setdefault(call.callee.rsplit(".", 1)[-1], []).append(call)

    def function(self, dotted: str) -> Optional[str]:
        """The function of the tree that `dotted` names, through package re-exports (asked
        once per call site and source: kept). Cost: a miss looks at the functions
        sharing the name's last part, and at most 4 re-exports deep."""
        if dotted not in self._resolved:
            self._resolved[dotted] = self._function(dotted, 0)
        return self._resolved[dotted]

    def _function(self, dotted: str, depth: int) -> Optional[str]:
        if dotted in self.functions:
            return dotted
        if self._by_last is None:  # a name that suffix-matches `dotted` ends with its last part
            self._by_last = {}
            for name in self.functions:
                self._by_last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        matches = [name for name in self._by_last.get(dotted.rsplit(".", 1)[-1], ()) if suffix_matches(name, dotted)]
        if matches:
            return min(matches)
        target = reexported(dotted, self.exports) if depth < MAX_REEXPORTS else None
        return None if target is None else self._function(target, depth + 1)

    def instances_into(self, function: str, param: str) -> Tuple[Set[str], bool]:
        """The sources (absolute names, a function's standing for what it returns) whose
        values reach parameter `param` of `function`, through every call site in the
        tree and the parameters those callers pass on; and whether any call site binds it."""
        found: Set[str] = set()
        bound = False
        seen: Set[Tuple[str, str]] = set()
        stack = [(function, param, 0)]
        while stack:
            target, name, depth = stack.pop()
            if (target, name) in seen or depth > FLOW_DEPTH or target not in self.functions:
                continue
            seen.add((target, name))
            params = self.functions[target].parameters
            index = params.index(name) if name in params else None
            for call in self._calls.get(target.rsplit(".", 1)[-1], ()):
                if self.function(call.callee) != target:
                    continue
                for argument in call.arguments:
                    if argument.key != name and argument.key != index:
                        continue
                    bound = True
                    for source in argument.sources:
                        if source.startswith(PARAM):
                            stack.append((call.caller, source[len(PARAM):], depth + 1))
                        else:
                            found |= self.returned(source, depth)
        return found, bound

    def returned(self, source: str, depth: int) -> Set[str]:
        """A source, and for a function of the tree what it returns (a factory's model)."""
        function = self.function(source)
        if function is None or depth > FLOW_DEPTH:
            return {source}
        found = {source}
        for returned in self.functions[function].returns:
            if not returned.startswith(PARAM):
                found |= self.returned(returned, depth + 1)
        return found
