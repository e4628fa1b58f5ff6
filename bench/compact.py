"""Compaction on replayed sessions: what a client that keeps its whole history and compacts before every step
sends, against sending everything and against clearing down to the trigger at every step.

Usage: python -m bench.compact [--steps 45]

Sessions are built from real tool outputs in ../shared/data (SQuAD articles as files, web pages' HTML, recorded
search API responses), one tool result per step, every ninth an error; in both formats (OpenAI chat, Anthropic
messages), through the running service (`POST /v1/context/compact`, API.md defaults unless said). Reported: the
tokens sent over the session, the per-step curve (bench/results/compact.png), the share of steps whose projection
of the previous step is a prefix of this step's (the prompt cache hits), every cleared result recovered byte for
byte by its ref, every error kept; and the time of one compact call on a 200k-token history with 5 results to clear.
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import time
import zlib
from pathlib import Path
from typing import Any

from bench.datasets import DATA
from bench.loadtest import scratch_service
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client

RESULTS = Path(__file__).resolve().parent / "results"
TOKENS = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")


def outputs() -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, output) from the shared data, in a fixed order."""
    squad = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    articles = [("read_file", {"path": f"{a['title']}.txt"}, "\n\n".join(p["context"] for p in a["paragraphs"]))
                for a in squad[:20]]
    pages = [("fetch_page", {"url": f"https://example.com/{p.name}"}, (p / "source.html").read_text(errors="replace"))
             for p in sorted((DATA / "web_pages").iterdir()) if (p / "source.html").exists()][:12]
    searches = [("web_search", {"query": f.stem}, f.read_text()) for f in sorted((DATA / "web_search").glob("*.json"))]
    mixed: list[tuple[str, dict[str, Any], str]] = []
    for i in range(max(len(articles), len(pages), len(searches))):
        for group in (articles, pages, searches):
            if i < len(group):
                mixed.append(group[i])
    return mixed


def error(step: int) -> str:
    return "Traceback (most recent call last):\n" + "".join(f'  File "agent.py", line {step * 10 + i}, in step\n'
                                                             for i in range(30)) + f"ValueError: step {step} failed"


def session(steps: int, fmt: str) -> list[list[dict[str, Any]]]:
    """The history before each step (each a longer copy of the last)."""
    pool = outputs()
    history: list[dict[str, Any]] = [{"role": "user", "content": "Research the topic and write a report."}]
    before = []
    for step in range(steps):
        tool, args, text = pool[step % len(pool)]
        text = error(step) if step % 9 == 8 else text
        call_id = f"call_{step}"
        if fmt == "openai":
            history = [*history, {"role": "assistant", "content": f"Step {step}.", "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]},
                {"role": "tool", "tool_call_id": call_id, "content": text}]
        else:
            history = [*history, {"role": "assistant", "content": [
                {"type": "text", "text": f"Step {step}."}, {"type": "tool_use", "id": call_id, "name": tool,
                                                             "input": args}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text,
                                              **({"is_error": True} if step % 9 == 8 else {})}]}]
        before.append(history)
    return before


def size(messages: list[dict[str, Any]]) -> int:
    return sum(TOKENS.count(json.dumps(m, ensure_ascii=False, separators=(",", ":"))) for m in messages)


def replay(client: Client, histories: list[list[dict[str, Any]]], **options: Any) -> dict[str, Any]:
    sent, prefix, previous, recovered, cleared_total, errors_cleared = [], 0, None, 0, 0, 0
    for history in histories:
        answer = client.compact(history, **options)
        sent.append(answer.usage.output_tokens)
        projection = answer.messages
        if previous is not None and projection[: len(previous)] == previous:
            prefix += 1
        previous = projection
        for cleared in answer.cleared:
            original = history[cleared.message]
            text = original["content"] if cleared.block is None else original["content"][cleared.block]["content"]
            errors_cleared += text.startswith("Traceback")
            recovered += client.fetch_ref(cleared.ref).text == text
            cleared_total += 1
    return {"sent": sent, "prefix": prefix / max(1, len(histories) - 1), "recovered": recovered,
            "cleared": cleared_total, "errors_cleared": errors_cleared}


def timing(client: Client, calls: int = 10) -> float:
    """p50 ms of one compact call on a ~200k-token history that clears exactly 5 results."""
    body = " ".join(f"word{i}" for i in range(2400))  # ~7k tokens a result: 28 of them make ~200k
    times = []
    for c in range(calls):
        history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for i in range(28):
            history += [{"role": "assistant", "content": None, "tool_calls": [
                {"id": f"t{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": f"t{i}", "content": f"call {c} result {i} {body}"}]
        result_tokens = TOKENS.count(history[2]["content"])
        total = size(history)
        started = time.perf_counter()
        answer = client.compact(history, trigger_tokens=total - 5 * result_tokens + 10, keep_tool_results=3,
                                clear_at_least=result_tokens)
        times.append((time.perf_counter() - started) * 1000)
        assert len(answer.cleared) == 5, len(answer.cleared)
    print(f"compact call, {total} tokens, 5 results cleared: p50 {statistics.median(times):.0f} ms "
          f"(target <= 150), {calls} calls", flush=True)
    return statistics.median(times)


def plot(curves: dict[str, list[int]], path: Path, width: int = 720, height: int = 360) -> None:
    """A line chart as a PNG (no plotting library: a pixel buffer, zlib and the PNG chunks)."""
    colours = [(200, 60, 60), (60, 120, 200), (40, 160, 80)]
    pixels = [[(255, 255, 255)] * width for _ in range(height)]
    top = max(max(c) for c in curves.values()) or 1
    longest = max(len(c) for c in curves.values())
    for colour, values in zip(colours, curves.values(), strict=False):
        points = [(int(20 + i * (width - 40) / max(1, longest - 1)), int(height - 20 - v * (height - 40) / top))
                  for i, v in enumerate(values)]
        for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
            for t in range(101):
                x, y = round(x0 + (x1 - x0) * t / 100), round(y0 + (y1 - y0) * t / 100)
                for dy in (-1, 0, 1):
                    if 0 <= y + dy < height:
                        pixels[y + dy][x] = colour
    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=45)
    args = parser.parse_args()
    with scratch_service("bench-compact-") as (url, _):
        client = Client(url, timeout=600)
        for fmt in ("openai", "anthropic"):
            histories = session(args.steps, fmt)
            everything = [size(h) for h in histories]
            ours = replay(client, histories)
            naive = replay(client, histories, clear_at_least=1)
            print(f"{fmt}: {args.steps} steps, history {everything[-1]} tokens at the end", flush=True)
            for name, run in (("no compaction", None), ("ctxsieve (defaults)", ours),
                              ("clear to the trigger every step", naive)):
                sent = everything if run is None else run["sent"]
                line = f"  {name:<34} tokens sent over the session {sum(sent):>9}"
                if run is not None:
                    line += (f"; prefix-stable steps {run['prefix']:.2f}; {run['cleared']} cleared results over "
                             f"the steps, recovered by ref {run['recovered']}/{run['cleared']}; errors cleared "
                             f"{run['errors_cleared']}")
                print(line, flush=True)
            if fmt == "openai":
                RESULTS.mkdir(exist_ok=True)
                plot({"none": everything, "ctxsieve": ours["sent"], "every step": naive["sent"]},
                     RESULTS / "compact.png")
        timing(client)


if __name__ == "__main__":
    main()
