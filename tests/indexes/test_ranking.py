"""Lexical terms, fusion and packing: the pure parts of ranking."""

from __future__ import annotations

import numpy as np

from ctxsieve.indexes.lexical import Bm25Index, terms
from ctxsieve.indexes.ranking import Candidate, fuse, pack_to_budget


def test_chinese_terms_are_character_bigrams() -> None:
    assert terms("长江很长") == ["长江", "江很", "很长"]
    assert terms("The Yangtze 长江!") == ["yangtze", "长江"]
    assert terms("2006年底特律") == ["2006", "年底", "底特", "特律"], "digits never swallow a CJK run"


def test_a_repeated_word_counts_more_only_where_the_kind_says_so() -> None:
    texts = ["the cache expires entries", "the session cache is swept", "sessions expire after an hour",
             "a river runs long"] * 3
    plain, repeated = Bm25Index.build(texts), Bm25Index.build(texts, k3=4.0)
    query = "session expired; session still there; the session is not swept"
    once = plain.scores("session expired still there the is not swept")
    assert np.array_equal(plain.scores(query), once), "k3 0: exactly the score of each word once"
    assert np.array_equal(repeated.scores("session expired"), plain.scores("session expired")), "no repeats"
    lifted = repeated.scores(query) - once
    assert lifted[1] > 0 and lifted[2] == 0, "only the documents holding the repeated word gain"


def test_bm25_finds_the_matching_chunk_in_both_languages() -> None:
    index = Bm25Index.build(["苹果的价格上涨了", "长江是中国最长的河流", "the river is long", "apples cost more"])
    assert int(np.argmax(index.scores("中国最长的河流"))) == 1
    assert int(np.argmax(index.scores("apple cost"))) == 3
    assert not index.scores("zzz").any()


def test_fusion_with_no_lexical_match_follows_dense() -> None:
    fused = fuse(np.array([0.80, 0.85, 0.70]), np.zeros(3), 0.5)
    assert list(np.argsort(-fused)) == [1, 0, 2]


def cands(tokens: list[int]) -> list[Candidate]:
    return [Candidate(i, t, f"chunk {i}") for i, t in enumerate(tokens)]


def test_packing_respects_k_and_budget_and_skips_what_does_not_fit() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    assert pack_to_budget(cands([10, 10, 10, 10]), scores, k=2, max_tokens=None) == [0, 1]
    assert pack_to_budget(cands([50, 80, 30, 10]), scores, k=5, max_tokens=100) == [0, 2, 3]


def test_packing_drops_repeated_text_and_honours_eligibility() -> None:
    repeated = [Candidate(0, 5, "same"), Candidate(1, 5, "same"), Candidate(2, 5, "other")]
    assert pack_to_budget(repeated, np.array([0.9, 0.8, 0.1]), k=3, max_tokens=None) == [0, 2]
    eligible = np.array([False, True, True])
    assert pack_to_budget(repeated, np.array([0.9, 0.8, 0.1]), k=3, max_tokens=None, eligible=eligible) == [1, 2]


def test_lines_repeated_at_two_places_are_both_kept_where_places_count() -> None:
    """Two parametrized failures end in the same `E   ValueError` lines: for a log each is its own failure."""
    repeated = [Candidate(0, 5, "E   ValueError: n must be > 0"), Candidate(1, 5, "E   ValueError: n must be > 0")]
    assert pack_to_budget(repeated, np.array([0.9, 0.8]), k=3, max_tokens=None, distinct=False) == [0, 1]


def test_ties_break_by_position() -> None:
    assert pack_to_budget(cands([1, 1, 1]), np.array([0.5, 0.5, 0.5]), k=2, max_tokens=None) == [0, 1]
