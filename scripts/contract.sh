#!/usr/bin/env bash
# The contract run of the HTTP API: starts `lorebank serve` on a temp dir, with a bearer
# token and small limits, prepares the example book `wuchuan` (created, glossary
# imported, every chunk's receipt recorded, by the pipeline example), then runs
# schemathesis against the server's own /openapi.json with a bounded budget. Checks: no
# 5xx, every status code and content type documented, every body and header valid
# against the document. Then scripts/contract_statuses.py makes the requests only a
# test can think of and checks that every documented status code was answered. Stops
# the server with SIGTERM. Exits non-zero on any failure (the server's too).
# Needs what scripts/setup.sh installs (httpx, schemathesis) and a built lorebank
# (cargo build --bin lorebank). CONTRACT_MAX_EXAMPLES sets the cases per operation.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${CARGO_TARGET_DIR:-target}/debug/lorebank"
[ -x "$BIN" ] || { echo "contract: $BIN is missing; run cargo build --bin lorebank" >&2; exit 1; }
python3 -c 'import httpx, schemathesis' 2>/dev/null || { echo "contract: run scripts/setup.sh first (httpx, schemathesis)" >&2; exit 1; }

WORK="$(mktemp -d)"
server_pid=""
stop_server() {
    [ -n "$server_pid" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    local status=0
    wait "$server_pid" || status=$?
    server_pid=""
    return "$status"
}
trap 'stop_server || true; rm -rf "$WORK"' EXIT

mkdir -p "$WORK/books"
# A book the server has not opened, which contract_statuses.py holds to get a 503.
"$BIN" --book "$WORK/books/held.lorebank" init --actor human:contract >/dev/null
token="contract-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
# A second token reads as a party: contract_statuses.py gets its 403s with it.
party_token="party-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n%s tool:pipeline\n' "$token" "$party_token" > "$WORK/token"
# The limits are small so that contract_statuses.py can go over them cheaply. The
# embedding routes run on the embed crate's tiny test model (with the ONNX Runtime
# library scripts/setup.sh installs).
"$BIN" serve --dir "$WORK/books" --listen 127.0.0.1:0 --token-file "$WORK/token" \
    --events-max 100 --chunks-max 20 --body-limit 1048576 \
    --embed-model embed/testdata/tiny.onnx --embed-tokenizer embed/testdata/tiny-tokenizer.json 2>"$WORK/serve.log" &
server_pid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's/^lorebank serve: listening on \(http:[^ ]*\).*/\1/p' "$WORK/serve.log")
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "contract: the server did not start" >&2; cat "$WORK/serve.log" >&2; exit 1; }
echo "contract: server at $url"

python3 examples/pipeline/pipeline.py --server "$url" --token "$token" --book wuchuan --out "$WORK/translations" >/dev/null

# Each operation gets its documented examples, then generated cases (valid and
# invalid); requests are made one at a time. Run in $WORK, where schemathesis keeps
# its cache.
failed=0
(cd "$WORK" && python3 -c 'import sys; from schemathesis.cli import schemathesis; sys.argv[0] = "schemathesis"; sys.exit(schemathesis())' \
    --no-color run "$url/openapi.json" \
    --header "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
    --phases examples,coverage,fuzzing \
    --max-examples "${CONTRACT_MAX_EXAMPLES:-50}" \
    --workers 1 \
    --seed 1 \
    --request-timeout 30 \
    --suppress-health-check all \
    --generation-database none \
    --report har --report-har-path "$WORK/schemathesis.har") || failed=1
python3 scripts/contract_statuses.py "$url" "$token" "$WORK/schemathesis.har" "$WORK/books/held.lorebank" "$party_token" || failed=1

stop_server || { echo "contract: the server did not stop cleanly after SIGTERM" >&2; cat "$WORK/serve.log" >&2; exit 1; }
[ "$failed" -eq 0 ] || { echo "contract: FAILED" >&2; exit 1; }
echo "contract: ok"
