"""Splitting a request into its intents (English and Chinese)."""

from __future__ import annotations

import pytest

from ctxsieve.indexes.tools.intents import MAX_INTENTS, split_intents


@pytest.mark.parametrize(("request_text", "intents"), [
    ("find the hotel, then book a taxi to it", ["find the hotel", "book a taxi to it"]),
    ("Get the weather in Oslo. Also convert 20 EUR to NOK.",
     ["Get the weather in Oslo.", "Also convert 20 EUR to NOK."]),
    ("帮我查一下北京的天气，然后订一张去上海的机票", ["帮我查一下北京的天气", "订一张去上海的机票"]),
    ("What is 3.5 times 2?", []),  # one intent: the whole request is all there is
    ("refund it. thanks", []),  # a fragment stays with its neighbour
])
def test_split_intents(request_text: str, intents: list[str]) -> None:
    assert split_intents(request_text) == intents


def test_a_long_request_keeps_at_most_the_first_intents() -> None:
    steps = ". ".join(f"Please run the step number {i}" for i in range(10))
    assert len(split_intents(steps)) == MAX_INTENTS
