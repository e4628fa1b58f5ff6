"""Plain text, what any output is when no other kind claims it: cut at paragraphs, packed to the chunk size, an
oversized paragraph cut at sentence ends (English and Chinese)."""

from __future__ import annotations

from .base import Prose


class Text(Prose):
    name = "text"
