#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 60) each. Needs cargo-fuzz.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in $(cargo fuzz list); do
    echo "fuzz: $target for ${seconds}s"
    RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" -- -max_total_time="$seconds"
done
