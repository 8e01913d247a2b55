#!/usr/bin/env bash
# The main job on the bundled example book (examples/wuchuan): installs what is
# missing, builds lorebank, writes the book's glossary into a fresh ledger, revises
# a term, and shows the log and the verification of the hash chain.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
echo "demo: building lorebank (the first build takes a few minutes)"
cargo build --quiet --bin lorebank
lorebank() { "${CARGO_TARGET_DIR:-target}/debug/lorebank" "$@"; }

export LOREBANK_BOOK="${CARGO_TARGET_DIR:-target}/demo/wuchuan.lorebank"
mkdir -p "$(dirname "$LOREBANK_BOOK")"
rm -f "$LOREBANK_BOOK"

step() { printf '\n== %s\n' "$*"; }

step "Create the book"
lorebank init

step "Import the glossary and summaries of 雾川灯录 as one atomic batch"
lorebank apply examples/wuchuan/glossary.jsonl --actor import:example

step "An editor revises a term: 灯宗 is reviewed and approved, with its declension"
lorebank term put --id T-10 --src 灯宗 --dst "Секта Фонаря" --kind organization --gender f \
    --decl "Секты Фонаря,Секте Фонаря" --actor human:editor --source "review-1"

step "A stale writer is refused (expected head 1): nothing is written"
if lorebank term put --id T-11 --src 灯奴 --dst "Слуга фонаря" --expect-head 1; then
    echo "demo: the stale write was not refused" >&2; exit 1
else
    echo "refused with exit code $?, as documented"
fi

step "The log: every change, with who made it and from what source"
lorebank log

step "Verify the hash chain"
lorebank verify
