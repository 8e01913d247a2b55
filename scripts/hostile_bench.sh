#!/usr/bin/env bash
# Time and peak memory of the CLI and the server on hostile inputs (docs/benchmarks.md,
# "Hostile inputs"):
#
#   scripts/hostile_inputs.py workbooks /tmp/hostile
#   scripts/hostile_bench.sh target/release/lorebank /tmp/hostile
#
# Each line: the case, the exit code, the wall-clock seconds and the peak RSS
# (/usr/bin/time -v), then the first line of stderr. An input that is not refused
# is cut off after LIMIT_S seconds (default 20) or at LIMIT_KB of virtual memory
# (default 8 GB), so an unbounded reader cannot take the machine.
set -u
bin=$(realpath "$1")
workbooks=$(realpath "$2")
limit_s=${LIMIT_S:-20}
limit_kb=${LIMIT_KB:-8388608}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
book="$work/b.lorebank"
"$bin" --book "$book" init >/dev/null

measure() {
    local name=$1
    shift
    /usr/bin/time -v -o "$work/time" bash -c "ulimit -v $limit_kb; exec timeout $limit_s \"\$@\"" _ "$@" \
        >/dev/null 2>"$work/err" </dev/null
    local code=$?
    local seconds rss
    seconds=$(awk -F': ' '/Elapsed/ {print $2}' "$work/time")
    rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f MB", $2 / 1024}' "$work/time")
    printf '%-28s exit %-3s %8s  %8s  %s\n' "$name" "$code" "$seconds" "$rss" "$(head -c 160 "$work/err" | head -1)"
}

for case in huge-cell million-rows shared-strings far-cell; do
    measure "import $case.xlsx" "$bin" --book "$book" import --dry-run "$workbooks/$case.xlsx"
done
measure "apply /dev/zero" "$bin" --book "$book" apply /dev/zero
measure "import /dev/zero" "$bin" --book "$book" import --format galtransl /dev/zero
measure "assemble --text /dev/zero" "$bin" --book "$book" assemble --chapter 1 --chunk c1 --text /dev/zero

# The server: each workbook posted to the import route of a fresh server; its peak
# RSS from /proc (VmHWM).
for case in huge-cell million-rows shared-strings; do
    dir="$work/books-$case"
    mkdir "$dir"
    (ulimit -v "$limit_kb"; exec "$bin" serve --dir "$dir" --listen 127.0.0.1:0) 2>"$work/serve" &
    server=$!
    address=
    for _ in $(seq 100); do
        address=$(grep -o 'http://[0-9.:]*' "$work/serve" | head -1)
        [ -n "$address" ] && break
        sleep 0.1
    done
    curl -s -X PUT "$address/v1/books/a" -H 'content-type: application/json' \
        -d '{"profile":"zh","actor":"human:bench"}' >/dev/null
    started=$(date +%s.%N)
    status=$(curl -s -o "$work/answer" -w '%{http_code}' -X POST --data-binary "@$workbooks/$case.xlsx" \
        --max-time "$limit_s" "$address/v1/books/a/import?file=$case.xlsx&dry_run=true")
    ended=$(date +%s.%N)
    printf '%-28s HTTP %-3s %8.2f s  %8s  %s\n' "serve import $case.xlsx" "$status" "$(echo "$ended - $started" | bc)" \
        "$(awk '/VmHWM/ {printf "%.0f MB", $2 / 1024}' /proc/$server/status 2>/dev/null || echo gone)" \
        "$(head -c 160 "$work/answer")"
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
done
