"""One log explained: the matched signatures, the evidence read, the diagnoses, the ranked causes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from torchlint.explain.evidence import Evidence, extract
from torchlint.explain.knowledge import Cause, KnowledgeBase, Match, condense, load_knowledge, match, rank_causes
from torchlint.explain.reasoning import Diagnosis, diagnose


@dataclass(frozen=True)
class Explanation:
    matches: List[Match]
    evidence: Evidence
    diagnoses: List[Diagnosis]

    def causes(self, found: Match) -> List[Cause]:
        """The causes of a matched error, in the order this log's evidence supports them."""
        return rank_causes(found.signature, self.evidence.features)

    @property
    def top(self) -> Optional[str]:
        """The leading explanation: `diag:<kind>`, else `<signature id>` or `<signature id>/<cause id>`."""
        if self.diagnoses:
            return f"diag:{self.diagnoses[0].kind}"
        if not self.matches:
            return None
        first = self.matches[0]
        causes = self.causes(first)
        return f"{first.signature.id}/{causes[0].id}" if causes else first.signature.id

    @property
    def gpu_claim(self) -> bool:
        """Whether the explanation says anything about a GPU, its driver or its libraries: a match of a
        GPU signature, unless the cause the evidence puts first is none (`Cause.gpu`)."""
        return bool(self.diagnoses) or any(self._claims_gpu(found) for found in self.matches)

    def _claims_gpu(self, found: Match) -> bool:
        if not found.signature.gpu:
            return False
        causes = self.causes(found)
        return not causes or causes[0].gpu


def explain(text: str, knowledge: Optional[KnowledgeBase] = None, original: Optional[bytes] = None) -> Explanation:
    """Match `text` against the knowledge base and reason over the evidence it carries;
    `original`: the log's bytes, where `text` was made of them by `log_text` (a match's
    line is then counted there)."""
    knowledge = knowledge or load_knowledge()
    work = condense(text)
    matches = match(work, knowledge, text if original is None else original)
    evidence = extract(work, [found.offset for found in matches])
    matches = [found for found in matches if evidence.features.isdisjoint(found.signature.unless)]
    return Explanation(matches, evidence, diagnose(evidence, matches))
