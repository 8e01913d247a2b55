#!/usr/bin/env bash
# Soak test (not run in CI): runs every fuzz target with its committed seed corpus
# (fuzz/corpus/TARGET) for MINUTES in all (default 60), split evenly between the
# targets (at least 10 seconds each). Needs cargo-fuzz (installed if missing).
#
#   scripts/soak-fuzz.sh [MINUTES]
#
# Inputs libFuzzer adds go into the corpus directory under their sha1 names, which the
# repository's .gitignore leaves out; a crash is saved in fuzz/artifacts/TARGET/. A target
# that fails does not stop the others; the script exits 1 if any failed and names
# them. scripts/fuzz-smoke.sh is the short form (a fixed number of seconds each).
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
minutes="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked || exit 1
targets=$(cargo fuzz list) || exit 1
n_targets=$(wc -w <<<"$targets")
seconds=$((minutes * 60 / n_targets))
((seconds >= 10)) || seconds=10
failed=()
for target in $targets; do
    echo "soak-fuzz: $target for ${seconds}s with corpus/$target"
    if ! RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds"; then
        failed+=("$target")
    fi
done
if ((${#failed[@]})); then
    echo "soak-fuzz: failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "soak-fuzz: $n_targets targets, ${seconds}s each, no failure"
