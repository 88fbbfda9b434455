#!/usr/bin/env bash
# Summarises one or more cargo-mutants output directories (each holding mutants.out/outcomes.json, as
# tools/mutants.sh leaves them): per file, how many mutants the in-process suite caught, missed, timed out on
# or could not build, then every missed mutant. Markdown, for spec/audit/mutants.md.
# Usage: tools/mutants-summary.sh DIR [DIR...]   (DIR/mutants.out/outcomes.json or DIR/outcomes.json)
# A mutant run in several directories counts once (by name). Needs: jq.
set -euo pipefail
files=()
for d in "$@"; do
  if [ -f "$d/mutants.out/outcomes.json" ]; then files+=("$d/mutants.out/outcomes.json");
  elif [ -f "$d/outcomes.json" ]; then files+=("$d/outcomes.json");
  else echo "mutants-summary: no outcomes.json under $d" >&2; exit 2; fi
done
jq -rs '
  [ .[].outcomes[] | select(.scenario | type == "object") | { file: .scenario.Mutant.file, name: .scenario.Mutant.name, s: .summary } ] | unique_by(.name) as $all
  | ($all | group_by(.file) | map({
      file: .[0].file,
      caught: map(select(.s == "CaughtMutant")) | length,
      missed: map(select(.s == "MissedMutant")) | length,
      timeout: map(select(.s == "Timeout")) | length,
      unviable: map(select(.s == "Unviable")) | length })) as $rows
  | "| file | caught | missed | timeout | unviable |", "|---|---:|---:|---:|---:|",
    ($rows[] | "| `\(.file)` | \(.caught) | \(.missed) | \(.timeout) | \(.unviable) |"),
    ( [$rows[].caught] | add) as $c | ([$rows[].missed] | add) as $m | ([$rows[].timeout] | add) as $t | ([$rows[].unviable] | add) as $u
    | "| **total** | \($c) | \($m) | \($t) | \($u) |",
      "",
      "Viable: \($c + $m + $t); caught or timed out: \($c + $t) (\(if ($c + $m + $t) > 0 then (($c + $t) * 1000 / ($c + $m + $t) | floor) / 10 else 0 end) %).",
      "",
      "Missed:",
      ($all[] | select(.s == "MissedMutant") | "- `\(.name)`")
' "${files[@]}"
