"""Which rule a toolset's recorded uses are applied by, chosen by the toolset's own history.

No fixed rule suits every toolset (`python -m bench.tools_tune --feedback`): where requests need several tools
each, lending a multi-tool request whole to each of its tools helps some pools and costs others ten points, and
the same holds for splitting it into parts. So once a toolset has MIN_USES recorded requests, they are its own
validation data: each rule below is scored by cross-validation on them (CHOICE_FOLDS folds, in recorded order:
the rule built from the other folds ranks each held-out request's tools, Recall@5), and the best is used; ties go
to the earlier rule in RULES. The choice is made again each time the history doubles, on the oldest
MIN_USES * 2^n uses, so every replica choosing from the same history chooses the same. One of the rules ignores
recorded uses altogether: a toolset whose history does not help is not made worse by it.

Functions of arrays and texts only, shared by ToolIndex and the tuning bench.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..lexical import Bm25Index
from .scoring import attribute, centroids, fuse_tool_scores, nearest_evidence

Lend = Literal["attributed", "whole", "none"]
LENDS: tuple[Lend, ...] = ("attributed", "whole", "none")
MIN_USES = 40  # recorded requests before a toolset's own history chooses its rule
CHOICE_FOLDS = 5
CHOICE_HELD = 400  # held-out requests scored at most, over all folds (every n-th of each fold)
CHOICE_K = 5


@dataclass(frozen=True)
class FeedbackRule:
    """How recorded uses count. `lend`: what a request that led to several tools lends them (`attributed`: each of
    its intents' vectors to the tool it fits best, its whole vector to each; `whole`: its whole vector and its
    words to each; `none`: nothing). `lift`: how far a tool's evidence lifts its dense score toward the evidence's
    when that is higher (1: all the way). `use`: False ignores recorded uses (the zero-shot ranking)."""

    lend: Lend = "attributed"
    lift: float = 1.0
    use: bool = True

    def __str__(self) -> str:
        return f"lend {self.lend}, lift {self.lift:g}" if self.use else "recorded uses ignored"


DEFAULT_RULE = FeedbackRule()  # before a toolset has MIN_USES recorded requests
RULES = (DEFAULT_RULE, FeedbackRule("whole"), FeedbackRule("none"), FeedbackRule("attributed", 0.5),
         FeedbackRule("whole", 0.5), FeedbackRule("none", 0.5), FeedbackRule(use=False))


def history_bucket(uses: int) -> int:
    """-1 below MIN_USES; else n where MIN_USES * 2^n <= uses < MIN_USES * 2^(n+1)."""
    if uses < MIN_USES:
        return -1
    return (uses // MIN_USES).bit_length() - 1


def uses_for_choice(bucket: int) -> int:
    return MIN_USES << bucket


@dataclass(frozen=True, kw_only=True)
class ToolsetView:
    """One toolset's tools as the rule is scored on them: each tool's cosine with a request vector, the texts its
    BM25 is built over, and the dense weight of the fusion."""

    cosines: Callable[[np.ndarray], np.ndarray]
    texts: Sequence[str]
    dense_weight: float


def choose_rule(uses: Sequence[tuple[str, Sequence[int]]], vectors: np.ndarray,
                part_vectors: Callable[[list[str]], np.ndarray], view: ToolsetView
                ) -> tuple[FeedbackRule, dict[FeedbackRule, float]]:
    """The rule whose cross-validated Recall@5 on these uses is highest (RULES order breaks ties), and every
    rule's score. `uses` are (request, tool indices) in recorded order, `vectors` their request vectors."""
    n, dim = len(uses), vectors.shape[1] if vectors.ndim == 2 else 0
    per_fold = max(1, CHOICE_HELD // CHOICE_FOLDS)
    recall = dict.fromkeys(RULES, 0.0)
    plain = Bm25Index.build(list(view.texts))  # the tool texts alone: what "ignore the history" ranks with
    held_total = 0
    for fold in range(CHOICE_FOLDS):
        train = [i for i in range(n) if i % CHOICE_FOLDS != fold]
        held_all = [i for i in range(n) if i % CHOICE_FOLDS == fold]
        held = held_all[:: max(1, len(held_all) // per_fold)][:per_fold]
        if not train or not held:
            continue
        held_total += len(held)
        cosines = {i: view.cosines(vectors[i]) for i in held}
        for i in held:
            _, fused = fuse_tool_scores(cosines[i], plain.scores(uses[i][0]), view.dense_weight)
            recall[FeedbackRule(use=False)] += _recall(fused, uses[i][1])
        for lend in LENDS:
            evidence = attribute([uses[i] for i in train], vectors[train], part_vectors, view.cosines, dim,
                                 lend=lend)
            lexical = Bm25Index.build([f"{text}\n" + "\n".join(evidence.words.get(t, []))
                                       for t, text in enumerate(view.texts)])
            means = centroids(evidence, len(view.texts))
            for i in held:
                q, (text, gold) = vectors[i], uses[i]
                scored = (nearest_evidence(evidence.vectors, evidence.owner, len(view.texts), q, evidence.weight),
                          means @ q) if len(evidence.owner) else None
                words = lexical.scores(text)
                for rule in (r for r in RULES if r.use and r.lend == lend):
                    _, fused = fuse_tool_scores(cosines[i], words, view.dense_weight, scored, rule.lift)
                    recall[rule] += _recall(fused, gold)
    scores = {rule: total / held_total if held_total else 0.0 for rule, total in recall.items()}
    best = max(RULES, key=lambda r: (round(scores[r], 6), -RULES.index(r)))
    return best, scores


def _recall(fused: np.ndarray, gold: Sequence[int]) -> float:
    top = set(np.argsort(-fused, kind="stable")[:CHOICE_K].tolist())
    used = set(gold)
    return len(used & top) / len(used) if used else 0.0
