#!/bin/sh
# A stand-in coding agent for the demo. spur passes the step's input as the last argument
# (and as $SPUR_AGENT_INPUT). It "implements" with a typo (and writes the task's Solution),
# "fixes" it, "reviews", and "verifies" by printing an answer file (Verdict line +
# requirement and AC tables) on stdout. spur gives every step $SPUR_BIN and the run's vars.
set -eu
input="${1:-$SPUR_AGENT_INPUT}"
case "$input" in
  /implement*)
    printf 'hello, wrold\n' > hello.txt
    # The implementer writes the task file's Solution (a `file:line` change map) through
    # spur, which edits that one section and nothing else in the file.
    solution=$(mktemp)
    printf '| Change (`file:line`) | What |\n|---|---|\n| `hello.txt:1` | the greeting |\n' > "$solution"
    "$SPUR_BIN" task update "$wbs" --section Solution --from-file "$solution"
    rm -f "$solution"
    echo "implemented hello.txt"
    ;;
  /fix*)
    printf 'hello, world\n' > hello.txt
    echo "fixed the greeting in hello.txt"
    ;;
  /review*)
    echo "Review: hello.txt prints the greeting; no findings."
    ;;
  /verify*)
    cat <<'ANSWER'
Verdict: PASS

## Requirements

| Req | Status | Evidence |
|-----|--------|----------|
| R1 | MET | `hello.txt:1` |

## Acceptance Criteria

| AC | Status | Evidence Type | Evidence |
|----|--------|---------------|----------|
| AC-1 | MET | command | `./check` passes against `hello.txt:1` |
ANSWER
    ;;
  *)
    echo "stub-agent: unknown step: $input" >&2
    exit 2
    ;;
esac
