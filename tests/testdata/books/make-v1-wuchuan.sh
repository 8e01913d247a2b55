#!/usr/bin/env bash
# How tests/testdata/books/v1-wuchuan.lorebank was made (once, with ledger format 1,
# at commit e9ed274). Never re-run to re-bless: the committed file is the fixture.
set -euo pipefail
cd "$(dirname "$0")/../../.."
BIN="${CARGO_TARGET_DIR:-target}/debug/lorebank"
OUT="$1"
export LOREBANK_BOOK="$OUT"
CHUNKS=$(mktemp -d)
for n in 1 2 3; do python3 scripts/demo_report.py split "examples/wuchuan/chapters/0$n.txt" "$CHUNKS/$n"; done
"$BIN" init --profile zh --actor human:editor
"$BIN" apply examples/wuchuan/glossary.jsonl --actor import:example
prev=()
for key in 1-1 1-2 2-1; do
    chapter=${key%-*}; chunk=${key#*-}
    [ "$chunk" = 1 ] && prev=()
    out=$("$BIN" --json assemble --chapter "$chapter" --chunk "$chunk" --text "$CHUNKS/$key.txt" "${prev[@]}")
    receipt=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["receipt"])' <<<"$out")
    prev=(--prev "$receipt")
done
"$BIN" term put --id T-7 --src 雾川 --dst "Туманная река" --kind place --gender f \
    --decl "Туманной реки,Туманную реку" --actor human:editor --source review-1
"$BIN" --json assemble --chapter 2 --chunk 2 --text $CHUNKS/2-2.txt "${prev[@]}" >/dev/null
"$BIN" rollback --to 15 --reason "keep the published names" --actor human:editor
"$BIN" --json assemble --chapter 3 --chunk 1 --text $CHUNKS/3-1.txt >/dev/null
