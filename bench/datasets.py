"""Long-input QA cases from ../shared/data: (question, long text, gold answers)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Case:
    question: str
    text: str
    answers: tuple[str, ...]


# Questions are split in two. "test" (bench/recall.py) is what the README quotes; "dev" (bench/pool_tune.py),
# 300 questions per set drawn apart from the first 150 test ones, is where fast mode's budget was chosen.
# A test run of any size leaves the dev questions out, so no figure quoted was tuned on.
DEV_QUESTIONS = 300
TEST_CORE = 150


@cache
def _squad_pool() -> tuple[Case, ...]:
    data = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    pool = []
    for article in data:
        text = "\n\n".join(p["context"] for p in article["paragraphs"])
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                pool.append(Case(qa["question"], text, tuple(a["text"] for a in qa["answers"])))
    return tuple(pool)


def _evenly(pool: tuple[Case, ...], limit: int) -> list[Case]:
    return list(pool[:: max(1, len(pool) // limit)][:limit])


def squad_cases(limit: int) -> list[Case]:
    """Test split: whole SQuAD articles as the input; questions spread evenly over all articles."""
    dev = {c.question for c in squad_dev_cases()}
    return [c for c in _evenly(_squad_pool(), limit) if c.question not in dev]


def squad_dev_cases(limit: int = DEV_QUESTIONS) -> list[Case]:
    core = {c.question for c in _evenly(_squad_pool(), TEST_CORE)}
    pool = list(_squad_pool())
    random.Random(99).shuffle(pool)
    return [c for c in pool if c.question not in core][:limit]


@cache
def _cmrc_paragraphs() -> list[dict]:  # type: ignore[type-arg]  # read-only: callers never change it
    data = json.loads((DATA / "cmrc2018" / "cmrc2018_dev.json").read_text())["data"]
    return [p for article in data for p in article["paragraphs"]]


def _padded(paragraphs: list[dict], index: int, rng: random.Random, target_chars: int) -> list[Case]:  # type: ignore[type-arg]
    """The paragraph at `index` hidden among others (distractors) to ~target_chars, at a random depth."""
    others = [p["context"] for j, p in enumerate(paragraphs) if j != index]
    rng.shuffle(others)
    filler: list[str] = []
    while sum(len(x) for x in filler) < target_chars:
        filler.append(others[len(filler)])
    filler.insert(rng.randrange(len(filler) + 1), paragraphs[index]["context"])
    text = "\n\n".join(filler)
    return [Case(qa["question"], text, tuple(a["text"] for a in qa["answers"])) for qa in paragraphs[index]["qas"]]


def _cmrc_test_indices(paragraphs: list[dict], limit: int) -> range:  # type: ignore[type-arg]
    return range(0, len(paragraphs), max(1, len(paragraphs) // max(1, limit // 3)))


def cmrc_cases(limit: int, target_chars: int = 7_500, seed: int = 7) -> list[Case]:
    """Test split: a CMRC paragraph hidden among other paragraphs to ~7k tokens, at a random depth."""
    paragraphs = _cmrc_paragraphs()
    dev = _cmrc_dev_indices(paragraphs)
    rng = random.Random(seed)
    cases: list[Case] = []
    for index in _cmrc_test_indices(paragraphs, limit):
        if index in dev:
            continue
        cases.extend(_padded(paragraphs, index, rng, target_chars))
        if len(cases) >= limit:
            break
    return cases[:limit]


def _cmrc_dev(paragraphs: list[dict], limit: int) -> tuple[list[int], random.Random]:  # type: ignore[type-arg]
    """Paragraphs in a seeded random order, skipping those of the first 150 test questions, until `limit`
    questions; and the generator, which goes on to pad them (so indices alone cost no padding)."""
    core, questions = set(), 0
    for index in _cmrc_test_indices(paragraphs, TEST_CORE):  # the paragraphs the first 150 test questions use
        if questions >= TEST_CORE:
            break
        core.add(index)
        questions += len(paragraphs[index]["qas"])
    rng = random.Random(99)
    order = list(range(len(paragraphs)))
    rng.shuffle(order)
    chosen, questions = [], 0
    for index in order:
        if questions >= limit:
            break
        if index not in core:
            chosen.append(index)
            questions += len(paragraphs[index]["qas"])
    return chosen, rng


def _cmrc_dev_indices(paragraphs: list[dict]) -> set[int]:  # type: ignore[type-arg]
    return set(_cmrc_dev(paragraphs, DEV_QUESTIONS)[0])


def cmrc_dev_cases(limit: int = DEV_QUESTIONS, target_chars: int = 7_500) -> list[Case]:
    paragraphs = _cmrc_paragraphs()
    chosen, rng = _cmrc_dev(paragraphs, limit)
    return [c for index in chosen for c in _padded(paragraphs, index, rng, target_chars)][:limit]


def found(answers: tuple[str, ...], shown: str) -> bool:
    return any(a and a in shown for a in answers)


NEEDLES = [
    ("The access code for the Halvorsen vault is 7391-KESTREL.", "What is the access code for the Halvorsen vault?",
     "7391-KESTREL"),
    ("Dr. Imelda Okonkwo was appointed chief cartographer of the Brightwater survey in 2031.",
     "Who was appointed chief cartographer of the Brightwater survey?", "Imelda Okonkwo"),
    ("蓝鲸计划的最终预算为四亿二千万元，由海洋研究所负责管理。", "蓝鲸计划的最终预算是多少？", "四亿二千万元"),
    ("The Marrowick bridge closes every Tuesday at 04:40 for cable inspection.",
     "When does the Marrowick bridge close for inspection?", "04:40"),
]


def haystack_cases(sizes: tuple[int, ...], depths: tuple[float, ...], tokenizer) -> list[Case]:  # type: ignore[no-untyped-def]
    """A planted fact at a given depth of 10k-100k tokens of real text (SQuAD articles, CMRC paragraphs)."""
    squad = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    english = [p["context"] for a in squad for p in a["paragraphs"]]
    cmrc = json.loads((DATA / "cmrc2018" / "cmrc2018_dev.json").read_text())["data"]
    chinese = [p["context"] for a in cmrc for p in a["paragraphs"]]
    cases = []
    for n, (fact, question, answer) in enumerate(NEEDLES):
        pool = chinese if any("\u4e00" <= ch <= "\u9fff" for ch in fact) else english
        for size in sizes:
            paragraphs: list[str] = []
            tokens = 0
            offset = (n * 997 + size) % len(pool)
            while tokens < size:
                paragraph = pool[(offset + len(paragraphs)) % len(pool)]
                paragraphs.append(paragraph)
                tokens += tokenizer.count(paragraph)
            for depth in depths:
                placed = list(paragraphs)
                placed.insert(int(depth * len(placed)), fact)
                cases.append(Case(question, "\n\n".join(placed), (answer,)))
    return cases
