"""Long-input QA cases from ../shared/data: (question, long text, gold answers)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Case:
    question: str
    text: str
    answers: tuple[str, ...]


def squad_cases(limit: int) -> list[Case]:
    """Whole SQuAD articles as the input; questions spread evenly over all articles."""
    data = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    pool = []
    for article in data:
        text = "\n\n".join(p["context"] for p in article["paragraphs"])
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                pool.append(Case(qa["question"], text, tuple(a["text"] for a in qa["answers"])))
    step = max(1, len(pool) // limit)
    return pool[::step][:limit]


def cmrc_cases(limit: int, target_chars: int = 7_500, seed: int = 7) -> list[Case]:
    """A CMRC paragraph hidden among other paragraphs (distractors) to ~7k tokens, at a random depth."""
    data = json.loads((DATA / "cmrc2018" / "cmrc2018_dev.json").read_text())["data"]
    paragraphs = [p for article in data for p in article["paragraphs"]]
    rng = random.Random(seed)
    cases: list[Case] = []
    step = max(1, len(paragraphs) // max(1, limit // 3))
    for index in range(0, len(paragraphs), step):
        target = paragraphs[index]
        others = [p["context"] for j, p in enumerate(paragraphs) if j != index]
        rng.shuffle(others)
        filler: list[str] = []
        while sum(len(x) for x in filler) < target_chars:
            filler.append(others[len(filler)])
        filler.insert(rng.randrange(len(filler) + 1), target["context"])
        text = "\n\n".join(filler)
        for qa in target["qas"]:
            cases.append(Case(qa["question"], text, tuple(a["text"] for a in qa["answers"])))
        if len(cases) >= limit:
            break
    return cases[:limit]


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
