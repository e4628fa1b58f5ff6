"""The tool registry and selection: versions replace each other whole, only named toolsets are seen, `always`
tools are kept, budgets hold, recorded uses are evidence, and abstention leaves only the `always` tools."""

from __future__ import annotations

import numpy as np
import pytest

from ctxsieve.indexes.errors import InvalidRequest, NotFound
from ctxsieve.indexes.store import Store, where
from ctxsieve.indexes.tools import SelectParams, ToolIndex
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.tokens import Tokenizer


def tool(name: str, description: str) -> dict[str, object]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}


CRM = [tool("refund_order", "Refund a customer's order and return the money"),
       tool("update_address", "Change a customer's shipping address"),
       tool("create_ticket", "Open a customer support ticket"),
       tool("finish", "Say the task is done")]
WEB = [tool("search_web", "Search the web for pages about a topic"), tool("fetch_page", "Fetch a web page by URL")]


@pytest.fixture
def index(edge: Store, cache: EmbeddingCache, words: Tokenizer) -> ToolIndex:
    tools = ToolIndex(edge, cache, words)
    tools.put("t", "crm", CRM)
    tools.put("t", "web", WEB)
    return tools


def names(index: ToolIndex, query: str, toolsets: list[str], **params: object) -> list[str]:
    return [s.name for s in index.select("t", query, toolsets, SelectParams(**params)).selected]  # type: ignore[arg-type]


def test_only_the_named_toolsets_are_searched(index: ToolIndex) -> None:
    assert set(names(index, "search the web for pages", ["crm"], k=3)) <= {t["name"] for t in CRM}
    assert names(index, "search the web for pages", ["web"], k=1) == ["search_web"]
    with pytest.raises(InvalidRequest):
        names(index, "anything", [])
    with pytest.raises(NotFound):
        names(index, "anything", ["crm", "nope"])
    with pytest.raises(NotFound):  # another tenant's toolset is unknown
        index.select("u", "refund", ["crm"], SelectParams())


def test_always_tools_come_first_and_budgets_hold(index: ToolIndex) -> None:
    chosen = names(index, "refund the order money", ["crm"], k=2, always=["finish"])
    assert chosen[0] == "finish" and chosen[1] == "refund_order" and len(chosen) == 3
    tight = index.select("t", "refund the order", ["crm"], SelectParams(k=4, max_tokens=60, format="anthropic"))
    assert tight.tokens_selected <= 60 and tight.tokens_selected < tight.tokens_all
    with pytest.raises(NotFound, match="always"):
        names(index, "refund", ["crm"], always=["nope"])


def test_the_same_request_gives_the_same_tools_in_the_same_order(index: ToolIndex) -> None:
    params = SelectParams(k=3, format="mcp")
    assert index.select("t", "customer order", ["crm", "web"], params) == \
        index.select("t", "customer order", ["web", "crm"], params)


def test_a_new_version_replaces_the_old_whole(edge: Store, index: ToolIndex) -> None:
    index.put("t", "crm", CRM[:2])
    assert [t.name for t in index.get("t", "crm").tools] == ["refund_order", "update_address"]
    stored = edge.count(index.space, where(tenant="t", toolset="crm", kind="tool"))
    assert stored == 2, "the previous version's tools are gone"


def test_recorded_uses_are_evidence_for_their_tool(index: ToolIndex) -> None:
    query = "my parcel goes to the wrong flat, fix where it ships"
    before = names(index, query, ["crm"], k=4)
    assert index.record_many("t", [(query, ["update_address"]), ("wrong flat again", ["update_address"])],
                             ["crm"]) == 2
    assert names(index, query, ["crm"], k=1) == ["update_address"]
    assert len(before) == 4
    with pytest.raises(NotFound):  # all or nothing: an unknown tool records nothing
        index.record_many("t", [("x", ["refund_order"]), ("y", ["nope"])], ["crm"])
    assert index.feedback_count("t", ["crm"]) == 2


def test_abstention_leaves_only_the_always_tools_and_says_why(index: ToolIndex) -> None:
    result = index.select("t", "zxqv wubble frobnicate", ["crm"], SelectParams(abstain=True, always=["finish"]))
    assert result.abstained and [s.name for s in result.selected] == ["finish"]
    assert result.reason is not None and "no tool fits" in result.reason
    fits = index.select("t", "Refund a customer's order and return the money", ["crm"], SelectParams(abstain=True))
    assert not fits.abstained and fits.selected[0].name == "refund_order"


def conversation(latest: str, chars: int = 20_000) -> str:
    """A long multi-turn request whose earlier turns are about something else."""
    turns, i = [], 0
    while sum(map(len, turns)) < chars:
        turns += [f"User: please change the shipping address of parcel {i} to flat {i}, street {i}",
                  f"Assistant: I changed the shipping address of parcel {i}; the courier knows."]
        i += 1
    return "\n".join([*turns, f"User: {latest}"])


def test_a_long_conversation_is_chosen_for_by_its_latest_turn(index: ToolIndex, words: Tokenizer) -> None:
    from ctxsieve.indexes.tools.request import FOCUS_TOKENS, focus

    request = conversation("now refund the order and return the money")
    assert len(request) > 20_000
    assert focus(request, words) == "now refund the order and return the money"
    assert focus("refund it", words) == "refund it", "a short request is used whole"
    unmarked = "\n\n".join(f"paragraph {i} about shipping addresses and couriers" for i in range(800))
    tail = focus(unmarked, words)
    assert unmarked.endswith(tail) and words.count(tail) <= FOCUS_TOKENS < words.count(unmarked)
    assert names(index, request, ["crm"], k=1) == ["refund_order"]


def test_the_judge_weighs_each_signal_by_how_well_it_tells_hits_from_near_misses() -> None:
    from ctxsieve.indexes.tools import calibrate

    # cosine separates hits from near-misses, the margin does a little, the lexical share not at all
    hits = np.array([[0.90, 3.0, 0.5], [0.88, 2.0, 0.6], [0.92, 2.5, 0.4], [0.89, 2.6, 0.5]])
    misses = np.array([[0.80, 2.4, 0.5], [0.78, 1.9, 0.6], [0.82, 2.2, 0.4], [0.79, 2.1, 0.5]])
    judge = calibrate(hits, misses, quantile=0.0)
    assert judge.weights[0] > judge.weights[1] > 0 and judge.weights[2] == 0
    assert all(judge.fits(s) for s in [*hits, *misses]), "the threshold is the lowest near-miss"
    assert not judge.fits(np.array([0.70, 2.0, 0.5]))
    assert calibrate(hits[:1], misses[:1]).threshold == -np.inf, "one ask cannot calibrate: never abstain"


def test_the_lexical_signal_is_a_share_of_the_request_words() -> None:
    from ctxsieve.indexes.lexical import Bm25Index
    from ctxsieve.indexes.tools import fit_signals

    lexical = Bm25Index.build(["refund the order", "change the shipping address", "open a ticket"])
    request = "refund the order and open a ticket"
    ceiling = lexical.ceiling(request)
    scores = lexical.scores(request)
    share = fit_signals(np.array([0.9, 0.5, 0.4]), scores, ceiling)[2]
    assert 0 < share < 1 and scores.max() < ceiling
    assert lexical.ceiling("zxqv wubble") == 0 and fit_signals(np.array([0.5]), np.zeros(1), 0.0)[2] == 0


def test_a_near_miss_keeps_the_toolset_size_and_a_small_toolset_has_no_margin() -> None:
    from ctxsieve.indexes.tools import MARGIN_MIN_TOOLS, fit_signals, without

    scores = np.array([0.9, 0.5, 0.7, 0.6])
    assert without(scores, [0]).tolist() == pytest.approx([0.6, 0.5, 0.7, 0.6]), "the own tool as an ordinary one"
    few, many = np.array([0.9, 0.5, 0.6]), np.linspace(0.3, 0.9, MARGIN_MIN_TOOLS)
    assert fit_signals(few, np.zeros(3), 1.0)[1] == 0, "over three tools the margin is pinned by the count"
    assert fit_signals(many, np.zeros(len(many)), 1.0)[1] > 1


def test_a_signal_whose_near_misses_score_higher_gets_no_weight() -> None:
    from ctxsieve.indexes.tools import calibrate

    hits = np.array([[0.9, 0.1, 0.5], [0.92, 0.2, 0.6], [0.91, 0.15, 0.4]])
    misses = np.array([[0.8, 0.3, 0.5], [0.82, 0.4, 0.6], [0.81, 0.35, 0.4]])
    assert calibrate(hits, misses).weights[1] == 0, "a higher margin never counts against fit"


def test_a_toolsets_history_chooses_its_feedback_rule_at_enough_uses_and_again_when_they_double(
        index: ToolIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxsieve.indexes.tools import prepared as module
    from ctxsieve.indexes.tools.feedback import DEFAULT_RULE, MIN_USES, FeedbackRule

    chosen: list[int] = []

    def choose(uses: list[object], *rest: object) -> tuple[FeedbackRule, dict[FeedbackRule, float]]:
        chosen.append(len(uses))
        return FeedbackRule("none", 0.5), {}

    monkeypatch.setattr(module, "choose_rule", choose)
    asks = [("refund_order", "give me my money back for order {}"), ("update_address", "ship order {} elsewhere"),
            ("create_ticket", "I have a complaint about order {}")]
    uses = [(text.format(n), [name]) for n in range(2 * MIN_USES // len(asks) + 1) for name, text in asks]
    index.record_many("t", uses[:MIN_USES - 1], ["crm"])
    assert index.feedback_rule("t", "crm") == (DEFAULT_RULE, MIN_USES - 1) and chosen == [], "too few: the default"
    index.record_many("t", uses[MIN_USES - 1:MIN_USES + 5], ["crm"])
    assert index.feedback_rule("t", "crm") == (FeedbackRule("none", 0.5), MIN_USES + 5)
    assert chosen == [MIN_USES], "chosen on the oldest MIN_USES"
    index.record_many("t", uses[MIN_USES + 5:2 * MIN_USES], ["crm"])
    names(index, "give me my money back for order 7", ["crm"], k=1)
    assert chosen == [MIN_USES, 2 * MIN_USES], "chosen again once the history doubled, not at every use"
