#!/usr/bin/env python3
"""A translation pipeline on lorebank serve: the job a translation team runs.

For each chapter of the example book (examples/wuchuan) it splits the text into
chunks, has lorebank assemble each chunk's context (recording a receipt), builds the
prompt a Sakura/GalTransl-style model expects (the glossary block in `src->dst #note`
lines), calls a translator, and writes the translation per chunk into --out. At the
end it replays every receipt it recorded and fails unless all are identical. Each
translation is post-checked against its receipt, and the check is stored in the book.

Creates the book if it is missing and imports the example glossary with an
Idempotency-Key, so running it twice appends nothing the second time.

Needs only the standard library and httpx (scripts/setup.sh installs it).
README.md beside this file has the commands.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

try:
    import httpx
except ImportError:  # pragma: no cover - the message is the point
    sys.exit("pipeline: the Python package httpx is missing; run scripts/setup.sh")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wuchuan"

# The Sakura v1.0 prompt shape (ChatML: a system message, then the glossary block and
# the text in the user message), with the languages of this book: Chinese to Russian.
SYSTEM_PROMPT = (
    "Ты — модель для перевода веб-романов. Переводи китайский текст на русский язык "
    "гладко и точно, строго следуя данному глоссарию."
)
USER_WITH_GLOSSARY = (
    "根据以下术语表（可以为空）：\n{glossary}\n将下面的中文文本根据对应关系和备注翻译成俄文：{text}"
)
USER_WITHOUT_GLOSSARY = "将下面的中文文本翻译成俄文：{text}"


class Failed(Exception):
    """A step failed; the message says which and why."""


# ----- the lorebank API -----


class Lorebank:
    """The few calls of lorebank serve the pipeline makes (docs/http.md)."""

    def __init__(self, server: str, book: str, token: str | None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=60.0)
        self.book = book

    def call(self, method: str, path: str, *, ok=(200,), **kwargs) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise Failed(f"{method} {path}: cannot reach the server: {error}") from error
        if response.status_code not in ok:
            raise Failed(f"{method} {path}: {problem(response)}")
        return response

    def books(self, path: str = "") -> str:
        return f"/v1/books/{self.book}{path}"

    def ensure_book(self, profile: str, actor: str) -> bool:
        """Creates the book unless it exists; true when it was created."""
        response = self.call("GET", self.books(), ok=(200, 404))
        if response.status_code == 200:
            return False
        # 409: another client created it in between, which is just as good.
        created = self.call("PUT", self.books(), ok=(201, 409), json={"profile": profile, "actor": actor})
        return created.status_code == 201

    def import_events(self, ndjson: bytes, actor: str, source: str) -> dict:
        """Appends the lines of a `lorebank apply` file as one batch. The key is the
        file's hash, so a second run (even against a restarted server) appends nothing."""
        key = "pipeline-import-" + hashlib.sha256(ndjson).hexdigest()[:32]
        response = self.call(
            "POST",
            self.books("/events"),
            params={"actor": actor, "source": source},
            headers={"Content-Type": "application/x-ndjson", "Idempotency-Key": key},
            content=ndjson,
        )
        answer = response.json()
        answer["replayed"] = response.headers.get("idempotent-replayed") == "true"
        return answer

    def glossary(self, chapter: int, revision: int) -> dict:
        return self.call("GET", self.books("/glossary"), params={"chapter": chapter, "as_of": revision}).json()

    def assemble_chapter(self, chapter: int, chunks: list[tuple[str, str]]) -> list[dict]:
        """Every chunk of a chapter in one request (one group commit of the receipts)."""
        body = {"chunks": [{"key": key, "text": text} for key, text in chunks]}
        return self.call("POST", self.books(f"/chapters/{chapter}/assemble"), json=body).json()["chunks"]

    def assemble_chunk(self, chapter: int, key: str, text: str, prev: str | None) -> dict:
        """One chunk; `prev` is the receipt of the chunk before it in the chapter."""
        body = {"chapter": chapter, "chunk": key, "text": text, "prev": prev}
        return self.call("POST", self.books("/assemble"), json=body).json()

    def replay(self, receipt: str) -> dict:
        return self.call("POST", self.books(f"/receipts/{receipt}/replay")).json()

    def check(self, receipt: str, translation: str, actor: str) -> dict:
        body = {"translation": translation, "record": True, "actor": actor}
        return self.call("POST", self.books(f"/receipts/{receipt}/check"), json=body).json()


def problem(response: httpx.Response) -> str:
    """The status and, for a problem+json body, its title and detail."""
    text = f"HTTP {response.status_code}"
    try:
        body = response.json()
    except ValueError:
        return f"{text}: {response.text.strip()[:500]}"
    if isinstance(body, dict) and "detail" in body:
        where = f" (at {body['at']})" if body.get("at") else ""
        return f"{text} {body.get('title', '')}: {body['detail']}{where}"
    return f"{text}: {json.dumps(body, ensure_ascii=False)[:500]}"


# ----- chapters, prompts, translators -----


def split_chapter(path: Path) -> list[tuple[str, str]]:
    """The chunks of a chapter file, as the demo splits them: at lines holding only
    `---`, keyed 1, 2, ..."""
    text = path.read_text(encoding="utf-8")
    return [(str(index), chunk.strip("\n") + "\n") for index, chunk in enumerate(text.split("\n---\n"), start=1)]


def sakura_field(text: str) -> str:
    """A field a Sakura gpt_dict line can hold: one line, no `->`, no `#`."""
    return " ".join(text.replace("->", "→").replace("#", "＃").split())


def glossary_block(assembled: dict, terms: dict[str, dict]) -> list[str]:
    """The glossary block in Sakura's gpt_dict text form, `src->dst #info`, one line
    per injected entry (in lorebank's order), then one per other surface the chunk
    wrote it with (an alias, or traditional characters), since a Sakura-style model
    and its clients match keys as plain substrings."""
    lines: list[str] = []
    seen: set[str] = set()
    for entry in assembled["injected"]:
        term = terms.get(entry["term"])
        if term is None:
            continue  # a summary or a record this block has no line form for
        info = [", ".join(part for part in (term.get("kind"), term.get("gender")) if part)]
        if term.get("decl"):
            info.append(", ".join(term["decl"]))
        if term.get("note"):
            info.append(term["note"])
        if entry["unverified"]:
            info.append("unverified")
        note = sakura_field("; ".join(part for part in info if part))
        dst = sakura_field(term["dst"])
        surfaces = [term["src"]] + [hit["text"] for hit in assembled["hits"] if hit["term"] == entry["term"]]
        for surface in surfaces:
            surface = sakura_field(surface)
            if surface and surface not in seen:
                seen.add(surface)
                lines.append(f"{surface}->{dst} #{note}" if note else f"{surface}->{dst}")
    return lines


def prompt(text: str, block: list[str]) -> list[dict]:
    user = (
        USER_WITH_GLOSSARY.format(glossary="\n".join(block), text=text)
        if block
        else USER_WITHOUT_GLOSSARY.format(text=text)
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_prompt(messages: list[dict]) -> tuple[dict[str, str], str]:
    """The glossary (src -> dst) and the text of a prompt built by `prompt`, read back
    the way a model would: from the message, not from the pipeline's variables."""
    user = messages[-1]["content"]
    glossary: dict[str, str] = {}
    if user.startswith(USER_WITH_GLOSSARY.split("{glossary}")[0]):
        head, marker, text = user.partition(USER_WITH_GLOSSARY.split("{glossary}")[1].split("{text}")[0])
        for line in head.splitlines()[1:]:
            src, _, rest = line.partition("->")
            glossary[src] = rest.split("#")[0].strip()
        return glossary, text
    return glossary, user.split("：", 1)[1]


def translate_offline(messages: list[dict]) -> str:
    """A deterministic stand-in for a model: every glossary src (longest first) becomes
    its dst, and each run of text left untranslated is marked ⟦like this⟧."""
    glossary, text = parse_prompt(messages)
    if not glossary:
        return "\n".join(f"⟦{line}⟧" if line else line for line in text.splitlines()) + "\n"
    keys = sorted(glossary, key=lambda src: (-len(src), src))
    pattern = re.compile("|".join(re.escape(src) for src in keys))
    out_lines = []
    for line in text.splitlines():
        pieces, last = [], 0
        for match in pattern.finditer(line):
            if match.start() > last:
                pieces.append(f"⟦{line[last:match.start()]}⟧")
            pieces.append(glossary[match.group(0)])
            last = match.end()
        if last < len(line):
            pieces.append(f"⟦{line[last:]}⟧")
        out_lines.append("".join(pieces))
    return "\n".join(out_lines) + "\n"


class OpenAITranslator:
    """An OpenAI-compatible chat completions endpoint (llama.cpp, vLLM, Sakura's own
    server, or a hosted API)."""

    def __init__(self, url: str, model: str, api_key: str | None, timeout: float):
        url = url.rstrip("/")
        if not url.endswith("/chat/completions"):
            url += "/chat/completions" if url.endswith("/v1") else "/v1/chat/completions"
        self.url = url
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(headers=headers, timeout=timeout)

    def __call__(self, messages: list[dict]) -> str:
        # Sakura's recommended sampling: low temperature, a narrow top_p.
        body = {"model": self.model, "messages": messages, "temperature": 0.1, "top_p": 0.3}
        try:
            response = self.http.post(self.url, json=body)
        except httpx.HTTPError as error:
            raise Failed(f"translator {self.url}: cannot reach it: {error}") from error
        if response.status_code != 200:
            raise Failed(f"translator {self.url}: {problem(response)}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise Failed(f"translator {self.url}: no choices[0].message.content in the answer") from error
        return content if content.endswith("\n") else content + "\n"


# ----- the job -----


def chapter_files(chapters_dir: Path, chapter: int | None) -> list[tuple[int, Path]]:
    """The chapter files NN.txt of the example (or the one asked for), in order."""
    found = sorted(
        (int(path.stem), path) for path in chapters_dir.glob("*.txt") if re.fullmatch(r"\d+", path.stem)
    )
    if chapter is not None:
        found = [(number, path) for number, path in found if number == chapter]
        if not found:
            raise Failed(f"--chapter {chapter}: no file {chapter:02}.txt in {chapters_dir}")
    if not found:
        raise Failed(f"no chapter files (NN.txt) in {chapters_dir}")
    return found


def run(args: argparse.Namespace) -> int:
    api = Lorebank(args.server, args.book, args.token)
    if args.translator == "offline":
        translator = translate_offline
    else:
        translator = OpenAITranslator(args.translator, args.model, args.api_key, args.translator_timeout)

    created = api.ensure_book(args.profile, args.actor)
    imported = api.import_events(args.glossary.read_bytes(), args.actor, args.glossary.name)
    state = "was already imported" if imported["replayed"] else f"imported, head {imported['head']}"
    print(f"book {args.book}: {'created' if created else 'exists'}; glossary {args.glossary.name} {state}")

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    recorded: list[dict] = []
    for chapter, path in chapter_files(args.chapters, args.chapter):
        chunks = split_chapter(path)
        if args.per_chunk:
            assembled, prev = [], None
            for key, text in chunks:
                one = api.assemble_chunk(chapter, key, text, prev)
                assembled.append(one)
                prev = one["receipt"]
        else:
            assembled = api.assemble_chapter(chapter, chunks)
        terms = {term["id"]: term for term in api.glossary(chapter, assembled[0]["revision"])["terms"]}
        for (key, text), one in zip(chunks, assembled):
            block = glossary_block(one, terms)
            messages = prompt(text, block)
            translation = translator(messages)
            receipt = one["receipt"]
            folder = out / f"chapter-{chapter:02}"
            folder.mkdir(parents=True, exist_ok=True)
            stem = f"chunk-{key}.{receipt[:12]}"
            (folder / f"{stem}.ru.txt").write_text(translation, encoding="utf-8")
            (folder / f"{stem}.prompt.json").write_text(
                json.dumps(messages, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            # The post-check of the translation, stored beside the receipt.
            check = api.check(receipt, translation, args.actor)
            flagged = [f"{item['term']} {item['verdict']}" for item in check["items"] if item["verdict"] != "rendered"]
            recorded.append(
                {
                    "chapter": chapter,
                    "chunk": key,
                    "receipt": receipt,
                    "snapshot": one["snapshot"],
                    "glossary": block,
                    "translation": f"{folder.name}/{stem}.ru.txt",
                    "check": check["check"],
                    "check_failed": check["failed"],
                }
            )
            injected = ", ".join(entry["term"] for entry in one["injected"])
            checked = f"check {check['check'][:12]}" + (f": {', '.join(flagged)}" if flagged else ": all rendered")
            print(f"chapter {chapter} chunk {key}: {len(block)} glossary lines [{injected}]; receipt {receipt[:12]}; {checked}")

    identical = 0
    for entry in recorded:
        replayed = api.replay(entry["receipt"])
        entry["identical"] = bool(replayed.get("identical"))
        identical += entry["identical"]
        if not entry["identical"]:
            print(f"replay {entry['receipt']}: NOT identical", file=sys.stderr)
    (out / "receipts.json").write_text(json.dumps(recorded, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{identical} of {len(recorded)} receipts replayed byte-identically")
    return 0 if identical == len(recorded) else 4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=os.environ.get("LOREBANK_SERVER", "http://127.0.0.1:7373"),
                        help="lorebank serve's base URL (env LOREBANK_SERVER)")
    parser.add_argument("--token", default=os.environ.get("LOREBANK_TOKEN"),
                        help="the server's bearer token, if it has one (env LOREBANK_TOKEN)")
    parser.add_argument("--book", default="wuchuan", help="the book's name on the server (default wuchuan)")
    parser.add_argument("--chapter", type=int, help="one chapter (default: every NN.txt of --chapters)")
    parser.add_argument("--chapters", type=Path, default=EXAMPLE / "chapters", help="the chapter files")
    parser.add_argument("--glossary", type=Path, default=EXAMPLE / "glossary.jsonl",
                        help="the events to import (a `lorebank apply` file)")
    parser.add_argument("--profile", default="zh", help="the profile of a book created here (default zh)")
    parser.add_argument("--actor", default="import:pipeline", help="who the writes are made by")
    parser.add_argument("--per-chunk", action="store_true",
                        help="assemble chunk by chunk, each naming the previous receipt, instead of "
                             "the whole chapter in one request")
    parser.add_argument("--translator", default="offline",
                        help="`offline` (a deterministic stand-in, the default) or the URL of an "
                             "OpenAI-compatible endpoint (.../v1/chat/completions)")
    parser.add_argument("--model", default=os.environ.get("LOREBANK_TRANSLATOR_MODEL", "sakura"),
                        help="the model name sent to the endpoint (env LOREBANK_TRANSLATOR_MODEL)")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"),
                        help="the endpoint's API key (env OPENAI_API_KEY)")
    parser.add_argument("--translator-timeout", type=float, default=300.0, help="seconds per translation")
    parser.add_argument("--out", type=Path, required=True, help="where the translations are written")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except Failed as error:
        print(f"pipeline: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"pipeline: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
