#!/usr/bin/env bash
# Measures the conformance suite's strength: cargo-mutants mutates the reference's pipeline, registry and
# validator, and each mutant is judged by the in-process suite alone (`cargo test -p dsh-harness --test
# conformance`), not by the reference's own unit tests, so a surviving mutant is a behaviour no scenario pins.
#
# The deep corpora (100,000-level files, seconds to load in a debug build) are left out through a corpus
# directory of links to the other files; everything else runs. A step gets 15 s (a mutant that hangs a step
# fails it instead of waiting out the conformance target's debug-build default of 300 s).
#
# Usage: tools/mutants.sh [TREE] [extra cargo-mutants args, e.g. --shard 1/4 or -f reference/src/registry/mod.rs]
#   TREE defaults to the repository holding this script. The run mutates TREE in place (--in-place), so give it
#   a worktree nobody edits meanwhile. Results land in TREE/mutants.out; tools/mutants-summary.sh turns them
#   into the summary kept in spec/audit/mutants.md.
# Needs: cargo install cargo-mutants --locked (v27).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$here}
[ $# -gt 0 ] && shift
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus/validation" "$corpus/sdk"
for f in "$tree"/corpus/validation/*.json "$tree"/corpus/sdk/*.json; do
  case $(basename "$f") in deep*) ;; *) ln -s "$f" "$corpus/$(basename "$(dirname "$f")")/" ;; esac
done
cd "$tree"
# Not `exec`: the trap above must still run to remove the temporary corpus directory.
cargo mutants --in-place --no-shuffle --baseline skip \
  -p dsh-tools --test-package dsh-harness --cargo-test-arg=--test=conformance \
  -f 'reference/src/pipeline/**' -f 'reference/src/registry/**' -f reference/src/schema/validate.rs \
  --timeout 150 --build-timeout 900 \
  "$@" \
  -- -- --step-timeout 15 --corpus "$corpus/validation" --sdk-corpus "$corpus/sdk"
