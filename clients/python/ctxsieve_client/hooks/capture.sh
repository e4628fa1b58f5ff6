#!/bin/bash
# ctxsieve's CLAUDE_CODE_SHELL_PREFIX for Claude Code: each command Claude Code runs comes here as one argument
# (the whole shell script Claude Code would hand its shell). A Bash tool call's script is run as Claude Code would
# run it, its output (stdout and stderr, as Claude Code shows them) also saved whole to a capture file, and its exit
# status kept; ctxsieve's PostToolUse / PostToolUseFailure hooks read the whole output from there, because Claude
# Code hands a hook only a preview of a large output and, for a failing command, only its own head-and-tail cut.
# Anything else (a hook, a status line), or a capture that cannot be written, runs untouched: this never stands
# between a command and its shell.
script=$1
case "$CLAUDE_CODE_SHELL" in
  */zsh|*/bash) shell=$CLAUDE_CODE_SHELL ;;
  *) case "$script" in *"/shell-snapshots/snapshot-zsh-"*) shell=zsh ;; *) shell=bash ;; esac ;;
esac
case "$script" in
  *"eval "*" < /dev/null"*) ;;
  *) exec "$shell" -c "$script" ;;
esac
# the folder install writes into Claude Code's settings; else the one ctxsieve_client.setup.state.capture_dir gives
# (never the temp folder: Claude Code's TMPDIR is not the service's, whose http hook reads it)
root=${CTXSIEVE_CAPTURE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/ctxsieve/captures}
session=$(printf '%s' "${CLAUDE_CODE_SESSION_ID:-none}" | tr -cd 'A-Za-z0-9_-')
dir=$root/${session:-none}
name=$dir/$(date +%s)-$$-$RANDOM
if ! { mkdir -p -m 700 "$dir" && printf '%s' "$script" > "$name.cmd" && : > "$name.out"; } 2>/dev/null; then
  exec "$shell" -c "$script"
fi
"$shell" -c "$script" 2>&1 | tee -a "$name.out"
exit "${PIPESTATUS[0]}"
