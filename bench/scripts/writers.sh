#!/usr/bin/env bash
# Concurrent writer processes on one book (issue 9): WRITERS `lorebank term put`
# processes at once, each making WRITES writes one after another, on a book of EVENTS
# events made with `apply`; READERS `lorebank show` loops run beside them until the
# writers are done. Prints how many writes succeeded, the command times (which are
# mostly the wait for a turn), and checks that no write was lost and the chain verifies.
#
#   bench/scripts/writers.sh [EVENTS [WRITERS [WRITES [READERS]]]]
#
# Defaults: 100000 events, 32 writers, 10 writes each, 2 readers. Every command keeps
# the default patience (`--wait`, 60 s) unless LOREBANK_WAIT is set. The book lives in
# a temp dir (TMPDIR) and is deleted afterwards. LOREBANK_BIN runs another build of
# lorebank instead of this tree's release build.
set -euo pipefail

events=${1:-100000}
writers=${2:-32}
writes=${3:-10}
readers=${4:-2}

root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${LOREBANK_BIN:-}" ]; then
  bin=$LOREBANK_BIN # another build to compare with
else
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" --bin lorebank
  bin="$root/target/release/lorebank"
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export LOREBANK_BOOK="$dir/book.lorebank"
export LOREBANK_ACTOR="tool:writers-bench"

now_ms() { date +%s%3N; }

"$bin" init --profile plain >/dev/null
# events - 1 term puts (init wrote the first event), applied 10,000 per batch.
made=1
while [ "$made" -lt "$events" ]; do
  n=$(( events - made < 10000 ? events - made : 10000 ))
  seq $(( made )) $(( made + n - 1 )) \
    | awk '{ printf "{\"term_put\":{\"id\":\"T-%d\",\"src\":\"term%d\",\"dst\":\"t%d\"}}\n", $1, $1, $1 }' \
    > "$dir/batch.jsonl"
  "$bin" apply "$dir/batch.jsonl" >/dev/null
  made=$(( made + n ))
done
echo "book: $events events ($(du -h "$LOREBANK_BOOK" | cut -f1)); $writers writers x $writes writes, $readers readers"

start=$(now_ms)
touch "$dir/writers-running"
for r in $(seq 1 "$readers"); do
  (
    while [ -e "$dir/writers-running" ]; do
      t0=$(now_ms)
      if "$bin" show >/dev/null 2>>"$dir/reader-$r.err"; then code=0; else code=$?; fi
      echo "$code $(( $(now_ms) - t0 ))" >> "$dir/reads"
    done
  ) &
done
writer_pids=()
for w in $(seq 1 "$writers"); do
  (
    for j in $(seq 1 "$writes"); do
      id=$(( 9000000 + w * 100 + j ))
      t0=$(now_ms)
      if "$bin" term put --id "T-$id" --src "written$id" --dst "w$id" >/dev/null 2>>"$dir/writer-$w.err"; then
        code=0
      else
        code=$?
      fi
      echo "$code $(( $(now_ms) - t0 ))" >> "$dir/writes"
    done
  ) &
  writer_pids+=($!)
done
wait "${writer_pids[@]}"
rm "$dir/writers-running"
wait
elapsed=$(( $(now_ms) - start ))

summary() { # file label
  sort -n -k2 "$1" | awk -v label="$2" '
    { n++; if ($1 == 0) ok++; t[n] = $2 }
    END {
      p50 = t[int((n + 1) / 2)]; p99 = t[int(n * 0.99 + 0.999)]
      printf "%s: %d of %d succeeded; command time p50 %.2f s, p99 %.2f s, max %.2f s\n",
        label, ok, n, p50 / 1000, p99 / 1000, t[n] / 1000
    }'
}
summary "$dir/writes" writes
[ -s "$dir/reads" ] && summary "$dir/reads" reads
echo "wall time: $(( elapsed / 1000 )).$(( elapsed % 1000 / 100 )) s"
cat "$dir"/writer-*.err "$dir"/reader-*.err 2>/dev/null | grep -v '^note: waiting' | sort | uniq -c | head -5 || true

# No write lost: every written id is in the glossary, and the chain verifies.
expected=$(( events + writers * writes ))
head=$("$bin" --json verify | sed -n 's/.*"head":\([0-9]*\).*/\1/p')
found=$("$bin" --json show | grep -oE '"id":"T-9[0-9]{6}"' | sort -u | wc -l)
echo "verify: head $head (expected $expected); written terms found: $found of $(( writers * writes ))"
[ "$head" -eq "$expected" ] && [ "$found" -eq $(( writers * writes )) ]
