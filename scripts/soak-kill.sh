#!/usr/bin/env bash
# Soak test (not run in CI): SIGKILLs a mixed workload of the release binary N times
# (default 100; the goal before a release is 1,000 kills with 0 acknowledged writes
# lost) and checks the book after every kill.
#
#   scripts/soak-kill.sh [N]
#
# The workload, in a loop: `apply` of a batch of 2 to 6 terms, `term put`, and
# `assemble` of a chunk (which records a receipt). A write counts as acknowledged
# when its command exited 0; the workload logs it only then. After each kill (at a
# random moment, 50 to 800 ms into the round) the script runs `lorebank verify`
# (which recovers a book the kill left unclean) and checks that every acknowledged
# term is in the glossary with its rendering, that every batch of `apply` is there
# whole or not at all, and that every receipt acknowledged since the previous kill
# replays byte for byte. Set LOREBANK to use a binary other than
# target/release/lorebank; the book lives in a temporary directory, kept on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-100}"
if [[ -z "${LOREBANK:-}" ]]; then
    cargo build --release --quiet --bin lorebank
    LOREBANK="$PWD/target/release/lorebank"
fi
work="$(mktemp -d)"
book="$work/book.lorebank"
export LOREBANK_BOOK="$book" LOREBANK_ACTOR="human:soak"
"$LOREBANK" init --profile plain >/dev/null
# Acknowledged writes, one per line: `term ID DST`, `batch NAME ID...`, `receipt ID`.
acked="$work/acked"
: >"$acked"

# One round of the workload: runs until killed. Ids are unique per round and write.
workload() {
    local round="$1" i=0 n id dst ids file receipt
    while true; do
        i=$((i + 1))
        case $((RANDOM % 3)) in
            0)
                n=$((2 + RANDOM % 5))
                file="$work/batch-$round-$i.jsonl"
                ids=()
                : >"$file"
                for ((k = 1; k <= n; k++)); do
                    id="T-$((round * 100000 + i * 10 + k))"
                    ids+=("$id")
                    printf '{"term_put":{"id":"%s","src":"src%sx","dst":"dst %s"}}\n' "$id" "${id#T-}" "$id" >>"$file"
                done
                if "$LOREBANK" apply "$file" >/dev/null 2>&1; then
                    echo "batch $round-$i ${ids[*]}" >>"$acked"
                fi
                ;;
            1)
                id="T-$((round * 100000 + i * 10))"
                dst="dst $id"
                if "$LOREBANK" term put --id "$id" --src "src${id#T-}x" --dst "$dst" >/dev/null 2>&1; then
                    echo "term $id $dst" >>"$acked"
                fi
                ;;
            2)
                printf 'src%sx met src%sx.\n' "$((round * 100000 + 10))" "$((round * 100000 + 20))" >"$work/chunk.txt"
                if receipt="$("$LOREBANK" --json assemble --chapter 1 --chunk "r$round-$i" --text "$work/chunk.txt" 2>/dev/null)"; then
                    receipt="$(grep -o '"receipt":"[0-9a-f]*"' <<<"$receipt" | cut -d'"' -f4)"
                    [[ -n "$receipt" ]] && echo "receipt $receipt" >>"$acked"
                fi
                ;;
        esac
    done
}

fail() {
    echo "soak-kill: $* (book and logs kept in $work)" >&2
    exit 1
}

checked_receipts=0
for ((round = 1; round <= kills; round++)); do
    set -m
    workload "$round" &
    child=$!
    set +m
    sleep "0.$(printf '%03d' $((50 + RANDOM % 750)))"
    # The whole process group: the loop and whichever lorebank it is running.
    kill -KILL -- "-$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
    "$LOREBANK" verify >"$work/verify.out" 2>&1 || fail "round $round: verify failed: $(cat "$work/verify.out")"
    "$LOREBANK" --json show >"$work/show.json" || fail "round $round: show failed"
    python3 - "$acked" "$work/show.json" <<'EOF' || fail "round $round: an acknowledged write is missing or a batch is partial"
import json, sys
acked, show = sys.argv[1], sys.argv[2]
terms = {term["id"]: term["dst"] for term in json.load(open(show))["terms"]}
bad = []
for line in open(acked):
    kind, rest = line.rstrip("\n").split(" ", 1)
    if kind == "term":
        term, dst = rest.split(" ", 1)
        if terms.get(term) != dst:
            bad.append(f"acknowledged term {term} is {terms.get(term)!r}, not {dst!r}")
    elif kind == "batch":
        name, *ids = rest.split(" ")
        missing = [i for i in ids if i not in terms]
        if missing:
            bad.append(f"acknowledged batch {name} lacks {missing}")
for message in bad:
    print(message, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
    # Unacknowledged batches: whole or absent.
    for file in "$work"/batch-"$round"-*.jsonl; do
        [[ -e "$file" ]] || continue
        ids=$(grep -o '"id":"T-[0-9]*"' "$file" | cut -d'"' -f4)
        present=0 total=0
        for id in $ids; do
            total=$((total + 1))
            grep -q "\"id\":\"$id\"" "$work/show.json" && present=$((present + 1))
        done
        ((present == 0 || present == total)) || fail "round $round: batch $file is partial ($present of $total)"
    done
    while read -r receipt; do
        "$LOREBANK" replay "$receipt" >/dev/null 2>&1 || fail "round $round: receipt $receipt does not replay"
        checked_receipts=$((checked_receipts + 1))
    done < <(awk 'NR > seen && $1 == "receipt" { print $2 }' seen="${seen:-0}" "$acked")
    seen=$(wc -l <"$acked")
    echo "kill $round/$kills: ok ($(grep -c . "$acked") acknowledged writes, $checked_receipts receipts replayed)"
done
echo "soak-kill: $kills kills, 0 acknowledged writes lost, 0 partial batches"
rm -rf "$work"
