"""The official `openai` Python client against lorebank's proxy (tests/proxy_openai.rs).

Usage: openai_client.py JSON, where JSON is an object with "server"
(`http://127.0.0.1:PORT`), "book", "token" (lorebank's bearer token, which the
client sends as its API key) and "chunks" (three texts to translate). Makes, through
`openai.OpenAI(base_url=SERVER/proxy/BOOK/v1)`:

* a whole chat completion of chunks[0], named chapter 3, chunk 0001 by headers;
* a streamed one of chunks[1], named by the path (base URL
  `/proxy/BOOK/chapters/3/chunks/0002/v1`);
* a streamed one of chunks[2], named chapter 3, chunk 0003 by headers;
* the model list.

Each is read through `with_raw_response`, so the answer's headers are there beside
what the client parsed. Prints one JSON object: for each request the text the client
parsed and lorebank's headers; the model ids listed. Exits non-zero (naming
scripts/setup.sh) when the package is missing; the checks are the test's.
"""

import json
import sys

try:
    import openai
except ImportError as error:
    sys.exit(f"the Python package openai is missing ({error}): run scripts/setup.sh")

SYSTEM = "You translate Chinese novels into Russian."


def lorebank_headers(raw):
    return {
        name: raw.headers.get(name)
        for name in ("lorebank-receipt", "lorebank-chapter", "lorebank-chunk", "lorebank-injected")
    }


def messages(text):
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Translate into Russian:\n" + text},
    ]


def whole(client, text, headers):
    raw = client.chat.completions.with_raw_response.create(
        model="ok", messages=messages(text), extra_headers=headers
    )
    completion = raw.parse()
    return {
        "text": completion.choices[0].message.content,
        "model": completion.model,
        "total_tokens": completion.usage.total_tokens,
        "headers": lorebank_headers(raw),
    }


def streamed(client, text, headers):
    raw = client.chat.completions.with_raw_response.create(
        model="ok", messages=messages(text), stream=True, extra_headers=headers
    )
    pieces = []
    events = 0
    for chunk in raw.parse():
        events += 1
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
    return {"text": "".join(pieces), "events": events, "headers": lorebank_headers(raw)}


def main():
    args = json.loads(sys.argv[1])
    base = f"{args['server']}/proxy/{args['book']}"
    # No retries: a failure is the test's to see, not the client's to hide.
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=args["token"], max_retries=0, timeout=60)
    by_path = openai.OpenAI(
        base_url=f"{base}/chapters/3/chunks/0002/v1", api_key=args["token"], max_retries=0, timeout=60
    )
    chunks = args["chunks"]
    report = {
        "openai": openai.__version__,
        "whole": whole(client, chunks[0], {"Lorebank-Chapter": "3", "Lorebank-Chunk": "0001"}),
        "path": streamed(by_path, chunks[1], None),
        "streamed": streamed(client, chunks[2], {"Lorebank-Chapter": "3", "Lorebank-Chunk": "0003"}),
        "models": [model.id for model in client.models.list()],
    }
    print(json.dumps(report, ensure_ascii=False))


main()
