"""A toolset's recorded uses choose the rule they are applied by (indexes/tools/feedback.py): cross-validated on
its own history, again each time it doubles, and never a rule that makes the toolset worse than ignoring them."""

from __future__ import annotations

import numpy as np

from ctxsieve.indexes.tools.feedback import (
    DEFAULT_RULE,
    MIN_USES,
    FeedbackRule,
    ToolsetView,
    choose_rule,
    history_bucket,
    uses_for_choice,
)

DIM = 32


def toolset(seed: int = 0, tools: int = 40) -> tuple[np.ndarray, ToolsetView]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(tools, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, ToolsetView(cosines=lambda v: vectors @ v, texts=["a tool"] * tools,
                                dense_weight=0.74)


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def word(i: int) -> str:
    """A request's own word, shared with no other request (so BM25 carries nothing between them)."""
    letters = ""
    i += 26 * 27
    while i:
        i, d = divmod(i, 26)
        letters += chr(97 + d)
    return letters


def no_parts(texts: list[str]) -> np.ndarray:
    return np.zeros((len(texts), DIM))


def test_the_history_is_chosen_from_at_min_uses_and_again_each_time_it_doubles() -> None:
    assert history_bucket(MIN_USES - 1) == -1
    assert [history_bucket(n) for n in (MIN_USES, 2 * MIN_USES - 1, 2 * MIN_USES, 5 * MIN_USES)] == [0, 0, 1, 2]
    assert uses_for_choice(2) == 4 * MIN_USES


def test_uses_that_teach_what_the_descriptions_miss_are_used() -> None:
    tools, view = toolset()
    rng = np.random.default_rng(1)
    # each tool is asked for in words far from its description, consistently: only its history can teach that
    hidden = unit(rng.normal(size=(len(tools), DIM)))
    owners = [int(t) for t in rng.integers(len(tools), size=160)]
    vectors = unit(hidden[owners] + 0.2 * rng.normal(size=(160, DIM)))
    uses = [(word(i), [t]) for i, t in enumerate(owners)]
    rule, scores = choose_rule(uses, vectors, no_parts, view)
    assert rule.use and scores[rule] > scores[FeedbackRule(use=False)] + 0.3


def test_uses_that_only_add_noise_are_ignored() -> None:
    tools, view = toolset(3)
    rng = np.random.default_rng(3)
    owners = [int(t) for t in rng.integers(len(tools), size=200)]
    # every request names its tool in the words of its description (zero-shot finds it), but its vector carries
    # a large share of noise of its own: a tool's past requests lie nearer other requests than its description
    vectors = unit(0.5 * tools[owners] + rng.normal(size=(200, DIM)) / np.sqrt(DIM) * 2.0)
    uses = [(word(i), [t]) for i, t in enumerate(owners)]
    rule, scores = choose_rule(uses, vectors, no_parts, view)
    assert scores[FeedbackRule(use=False)] > scores[DEFAULT_RULE], scores
    assert rule == FeedbackRule(use=False)


def test_the_choice_is_deterministic_and_ties_go_to_the_first_rule() -> None:
    _, view = toolset()
    uses = [(word(i), [0]) for i in range(MIN_USES)]
    vectors = np.zeros((MIN_USES, DIM))
    vectors[:, 0] = 1.0  # every request the same, for tool 0: every rule that uses the history finds it
    rule, scores = choose_rule(uses, vectors, no_parts, view)
    assert {score for r, score in scores.items() if r.use} == {1.0} and rule == DEFAULT_RULE
    assert (rule, scores) == choose_rule(uses, vectors, no_parts, view)
