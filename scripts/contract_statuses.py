"""The second half of the contract run (scripts/contract.sh): every status code the
OpenAPI document lists must be reachable, and every answer must be one it lists.

Makes the requests schemathesis cannot think of (no bearer token, a token that reads
as a party, an existing book, a stale expected_head, a reused Idempotency-Key, more
events or chunks than the limits contract.sh starts the server with, a body over the
limit, a book another process holds), checks each answer against
the document, then adds the statuses schemathesis saw (its HAR report) and fails when a
documented status was never answered, unless UNREACHABLE says why it cannot be here.

Usage: contract_statuses.py URL TOKEN HAR_FILE HELD_BOOK PARTY_TOKEN
HELD_BOOK is the file of a book in the server's directory that it has not opened yet;
PARTY_TOKEN a token of the server that reads as the party tool:pipeline.
"""

import fcntl
import json
import re
import sys
from pathlib import Path

import httpx

BOOK = "wuchuan"

# Documented statuses this run cannot produce, and why.
UNREACHABLE = {
    ("put", "/v1/books/{book}", 200): "a create's retry answers 200 from the book's marker only once the server has "
    "forgotten the first answer (a restart, or 10,000 later keys); tests/serve_hostile.rs retries every write route "
    "after a restart",
}


def main(url, token, har_path, held_book, party_token):
    spec = httpx.get(f"{url}/openapi.json").json()
    operations = []  # (method, template, regex, documented statuses)
    for template, item in spec["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
        for method, operation in item.items():
            operations.append((method, template, pattern, {int(code) for code in operation["responses"]}))

    def operation_of(method, path):
        for op_method, template, pattern, documented in operations:
            if op_method == method.lower() and pattern.match(path):
                return template, documented
        return None, set()

    seen = set()
    failures = []

    def record(method, path, status, content_type, origin):
        template, documented = operation_of(method, path)
        if template is None:
            return
        seen.add((method.lower(), template, status))
        if status not in documented:
            failures.append(f"{origin}: {method} {path} answered {status}, not documented ({sorted(documented)})")
        elif status >= 400 and not content_type.startswith("application/problem+json"):
            failures.append(f"{origin}: {method} {path} answered {status} as {content_type!r}, not problem+json")

    with open(har_path, encoding="utf-8") as har:
        for entry in json.load(har)["log"]["entries"]:
            path = httpx.URL(entry["request"]["url"]).path
            headers = {h["name"].lower(): h["value"] for h in entry["response"].get("headers", [])}
            record(entry["request"]["method"], path, entry["response"]["status"], headers.get("content-type", ""),
                   "schemathesis")

    authorized = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    anonymous = httpx.Client(base_url=url, timeout=30)

    def call(client, method, path, **kwargs):
        response = client.request(method, path, **kwargs)
        record(method, path, response.status_code, response.headers.get("content-type", ""), "targeted")
        return response

    def expect(status, response, what):
        if response.status_code != status:
            failures.append(f"targeted: {what}: expected {status}, got {response.status_code}: {response.text[:300]}")

    # Every /v1 operation refuses a request without the bearer token.
    for method, template, _, _ in operations:
        if template.startswith("/v1/"):
            path = template.replace("{book}", BOOK).replace("{id}", "T-1").replace("{chapter}", "1").replace("{seq}", "1")
            expect(401, call(anonymous, method.upper(), path), f"{method.upper()} {template} without a token")

    # A token that reads as a party: the operations that read through a party's view
    # refuse to read as another party, every other operation refuses the token.
    party = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {party_token}"}, timeout=30)
    party_reads = {"/v1/status", "/v1/books", "/v1/books/{book}"}
    for method, template, _, _ in operations:
        if not template.startswith("/v1/"):
            continue
        operation = spec["paths"][template][method]
        reads_as_party = any(p["name"] == "Lorebank-Party" for p in operation.get("parameters", []))
        reads_as_party = reads_as_party or (method == "get" and template in party_reads)
        path = template.replace("{book}", BOOK).replace("{id}", "T-1").replace("{chapter}", "1")
        headers = {"Lorebank-Party": "human:someone-else"} if reads_as_party else {}
        expect(403, call(party, method.upper(), path, headers=headers),
               f"{method.upper()} {template} with a party's token" + (" as another party" if headers else ""))

    books = f"/v1/books/{BOOK}"
    expect(409, call(authorized, "PUT", books, json={"profile": "zh"}), "PUT an existing book")
    expect(413, call(authorized, "PUT", "/v1/books/big", content=b"{" + b" " * (1 << 20) + b"}",
                     headers={"Content-Type": "application/json"}), "PUT a body over --body-limit")
    head = call(authorized, "GET", books).json()["head"]
    stale = {"expected_head": head - 1}
    event = {"term_put": {"id": "T-12", "src": "孤岛", "dst": "Одинокий остров", "kind": "place"}}
    expect(409, call(authorized, "POST", f"{books}/events", json={"events": [event], **stale}),
           "POST events with a stale expected_head")
    expect(409, call(authorized, "PATCH", f"{books}/terms/T-1", json={"note": "x", **stale}),
           "PATCH a term with a stale expected_head")
    expect(409, call(authorized, "POST", f"{books}/rollback", json={"to": 1, **stale}),
           "POST rollback with a stale expected_head")
    expect(413, call(authorized, "POST", f"{books}/events", json={"events": [event] * 101}),
           "POST more events than --events-max")
    expect(409, call(authorized, "POST", f"{books}/impact", json={"events": [event], **stale}),
           "POST impact with a stale expected_head")
    expect(413, call(authorized, "POST", f"{books}/impact", json={"events": [event] * 101}),
           "POST impact with more events than --events-max")
    expect(400, call(authorized, "GET", f"{books}/records", params={"sort": "nothing"}),
           "GET records sorted by an unknown key")
    expect(400, call(authorized, "GET", f"{books}/names/lint", params={"chapter": "1"}),
           "GET names/lint with a query parameter it does not take")
    clash = {"term_put": {"id": "T-13", "src": "孤岛", "dst": "Другой остров"}}
    expect(400, call(authorized, "POST", f"{books}/impact", json={"events": [event, clash]}),
           "POST impact with a batch the head refuses")
    glossary = "孤岛\tОдинокий остров\n".encode()
    expect(409, call(authorized, "POST", f"{books}/import", params={"file": "g.txt", **stale}, content=glossary),
           "POST import with a stale expected_head")
    expect(413, call(authorized, "POST", f"{books}/import", params={"file": "g.txt"}, content=b"x" * (1 << 20 | 1)),
           "POST import of a file over --body-limit")
    chunks = [{"key": str(n), "text": "沈照"} for n in range(21)]
    expect(413, call(authorized, "POST", f"{books}/chapters/1/assemble", json={"chunks": chunks}),
           "POST more chunks than --chunks-max")
    key = {"Idempotency-Key": "contract-reuse"}
    expect(200, call(authorized, "POST", f"{books}/events", json={"events": [event]}, headers=key),
           "POST events with a new Idempotency-Key")
    expect(422, call(authorized, "POST", f"{books}/events", json={"events": [event], "source": "other"}, headers=key),
           "POST other events with the same Idempotency-Key")
    # Every write route honours a key the same way: a book created with a key and its
    # retry (the first answer again, 201), and a scan's key reused with another chunk
    # (422).
    created = {"Idempotency-Key": "contract-create"}
    expect(201, call(authorized, "PUT", "/v1/books/keyed", json={"profile": "zh"}, headers=created),
           "PUT a new book with an Idempotency-Key")
    expect(201, call(authorized, "PUT", "/v1/books/keyed", json={"profile": "zh"}, headers=created),
           "PUT the same book again with its Idempotency-Key")
    scanned = {"Idempotency-Key": "contract-scan"}
    expect(200, call(authorized, "POST", f"{books}/chapters/1/scan", json={"chunk": "k1", "text": "“林月”来了。"},
                     headers=scanned), "POST a scan with a new Idempotency-Key")
    expect(422, call(authorized, "POST", f"{books}/chapters/1/scan", json={"chunk": "k2", "text": "“林月”走了。"},
                     headers=scanned), "POST another scan with the same Idempotency-Key")
    # And a post-check, which may propose verdicts: its key reused with another
    # translation of the same receipt (422).
    assembled = call(authorized, "POST", f"{books}/assemble", json={"chapter": 1, "chunk": "contract-check", "text": "沈照来了。"})
    expect(200, assembled, "POST an assembly to check a translation of")
    checked_url = f"{books}/receipts/{assembled.json().get('receipt', 'none')}/check"
    checked = {"Idempotency-Key": "contract-check"}
    expect(200, call(authorized, "POST", checked_url, json={"translation": "Шэнь Чжао пришёл."}, headers=checked),
           "POST a check with a new Idempotency-Key")
    expect(422, call(authorized, "POST", checked_url, json={"translation": "Он пришёл."}, headers=checked),
           "POST another check with the same Idempotency-Key")
    expect(409, call(authorized, "POST", f"{books}/expected", params={"file": "cast.txt", **stale},
                     content="孤岛\n".encode()), "POST expected concepts with a stale expected_head")
    expect(200, call(authorized, "POST", f"{books}/expected", params={"file": "cast.txt"}, content="孤岛\n".encode()),
           "POST expected concepts")
    expect(413, call(authorized, "POST", f"{books}/expected", params={"file": "cast.txt"}, content=b"x" * (1 << 20 | 1)),
           "POST expected concepts over --body-limit")
    # The source text: a chapter set, a stale head refused, bodies over the limit.
    expect(200, call(authorized, "PUT", f"{books}/source/1", params={"title": "第一章"},
                     content="沈照提着长明灯。\r\n".encode()), "PUT a chapter's source text")
    stale = {"expected_head": call(authorized, "GET", books).json()["head"] - 1}
    expect(409, call(authorized, "PUT", f"{books}/source/2", params=stale, content="雾川。".encode()),
           "PUT a chapter's source text with a stale expected_head")
    expect(413, call(authorized, "PUT", f"{books}/source/2", content=b"x" * (1 << 20 | 1)),
           "PUT a chapter's source text over --body-limit")
    files = [{"name": "002.txt", "text": "雾川。"}]
    expect(409, call(authorized, "POST", f"{books}/source", json={"files": files, **stale}),
           "POST a source import with a stale expected_head")
    expect(413, call(authorized, "POST", f"{books}/source", content=b"{" + b" " * (1 << 20) + b"}",
                     headers={"Content-Type": "application/json"}), "POST a source import over --body-limit")
    # The embedding tier on the example book, with the server's tiny model: set it,
    # refuse a stale head, refresh, suggest and dedupe.
    model = {"name": "lorebank-tiny-char-mean-32", "output": "last_hidden_state"}
    expect(200, call(authorized, "PUT", f"{books}/embedding", json=model), "PUT the book's embedding model")
    expect(409, call(authorized, "PUT", f"{books}/embedding", json={**model, "normalize": False, **stale}),
           "PUT an embedding model with a stale expected_head")
    expect(200, call(authorized, "POST", f"{books}/embedding/refresh", json={}), "POST an embedding refresh")
    expect(200, call(authorized, "GET", f"{books}/embedding"), "GET the embedding status")
    expect(200, call(authorized, "POST", f"{books}/chapters/1/suggest",
                     json={"chunk": "1", "text": "“林月”来了。", "dry_run": True}), "POST suggest")
    expect(200, call(authorized, "POST", f"{books}/dedupe", json={"dry_run": True}), "POST dedupe")
    # The three that may propose candidates refuse a stale expected_head too.
    stale = {"expected_head": call(authorized, "GET", books).json()["head"] - 1}
    expect(409, call(authorized, "POST", f"{books}/chapters/1/scan",
                     json={"chunk": "k3", "text": "“林月”来了。", **stale}), "POST a scan with a stale expected_head")
    expect(409, call(authorized, "POST", f"{books}/chapters/1/suggest",
                     json={"chunk": "1", "text": "“苏晴”来了。", **stale}), "POST suggest with a stale expected_head")
    expect(409, call(authorized, "POST", f"{books}/dedupe", json=stale), "POST dedupe with a stale expected_head")
    expect(404, call(authorized, "GET", f"{books}/receipts/{'f' * 64}"), "GET a receipt the book does not have")
    expect(404, call(authorized, "GET", f"{books}/terms/T-999"), "GET a term the book does not have")
    expect(404, call(authorized, "GET", f"{books}/terms/T-999/timeline"), "GET the timeline of a term the book does not have")
    expect(404, call(authorized, "GET", f"{books}/events/{head + 1000}"), "GET an event after the head")

    # Every operation on a book that is not there, with a body and query that are
    # otherwise valid (the document's examples), answers 404.
    for method, template, _, documented in operations:
        operation = spec["paths"][template][method]
        if 404 not in documented or "{book}" not in template or (method, template) == ("put", "/v1/books/{book}"):
            continue
        path = template.replace("{book}", "nobook").replace("{id}", "T-1").replace("{chapter}", "1").replace("{seq}", "1")
        if "/receipts/" in template:
            path = path.replace("T-1", "f" * 64)
        query = {p["name"]: p.get("example", 1) for p in operation.get("parameters", [])
                 if p["in"] == "query" and p.get("required")}
        body = None
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" in content:
            schema = content["application/json"]["schema"]
            if "$ref" in schema:
                schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
            body = schema["example"]
        if content and "application/json" not in content:
            # A raw body (an imported file): any bytes will do before the book is found.
            response = call(authorized, method.upper(), path, params=query, content=b"x")
        else:
            response = call(authorized, method.upper(), path, params=query, json=body)
        expect(404, response, f"{method.upper()} {template} on a missing book")

    # A book whose file another process holds (redb's lock is an flock) is busy.
    with open(held_book, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = call(authorized, "GET", f"/v1/books/{Path(held_book).stem}")
        expect(503, busy, "GET a book another process holds")
        if busy.status_code == 503 and busy.headers.get("retry-after") != "1":
            failures.append(f"targeted: a busy book's answer has Retry-After {busy.headers.get('retry-after')!r}")
        # The embedding routes document 503 for embedding that cannot run as well; the
        # tests of the binary (tests/embed_cli.rs) get that one from servers without a
        # model or the library. Here: a held book.
        held_url = f"/v1/books/{Path(held_book).stem}"
        for method, path, body in [
            ("GET", f"{held_url}/embedding", None),
            ("PUT", f"{held_url}/embedding", model),
            ("POST", f"{held_url}/embedding/refresh", {}),
            ("POST", f"{held_url}/chapters/1/suggest", {"chunk": "1", "text": "“林月”"}),
            ("POST", f"{held_url}/dedupe", {}),
        ]:
            expect(503, call(authorized, method, path, json=body), f"{method} {path} of a book another process holds")

    for method, template, _, documented in operations:
        for status in sorted(documented):
            if (method, template, status) in seen:
                continue
            reason = UNREACHABLE.get((method, template, status))
            if reason:
                print(f"contract: {method.upper()} {template} {status} not reached here: {reason}")
            else:
                failures.append(f"{method.upper()} {template}: documented status {status} was never answered")

    documented = {(method, template, status) for method, template, _, statuses in operations for status in statuses}
    print(f"contract: {len(seen & documented)} of {len(documented)} documented (operation, status) pairs answered")
    for failure in failures:
        print(f"contract: FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
