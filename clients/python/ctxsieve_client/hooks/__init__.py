"""Hooks for agent runtimes that run a command per tool call: `claude_code` (Claude Code's PostToolUse hook)."""
