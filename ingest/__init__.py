"""Pure core: normalise tool output, chunk it with exact offsets, count tokens, embed.

No web framework, no environment reading, nothing that knows Qdrant.
"""
