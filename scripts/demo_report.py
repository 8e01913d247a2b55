"""Formats lorebank's JSON output for the demo (scripts/demo.sh). Reads stdin."""
import json
import os
import sys


def split(path, prefix):
    """Writes each '---'-separated chunk of a chapter file to PREFIX-N.txt."""
    text = open(path, encoding="utf-8").read()
    for index, chunk in enumerate(text.split("\n---\n"), start=1):
        with open(f"{prefix}-{index}.txt", "w", encoding="utf-8") as out:
            out.write(chunk.strip("\n") + "\n")


def chunk_line(chapter, chunk):
    """One line per assembled chunk: injected entries, spoiler blocks, receipt."""
    a = json.load(sys.stdin)
    injected = ", ".join(e["term"] + ("?" if e["unverified"] else "") for e in a["injected"])
    blocked = ", ".join(sorted({h["term"] for h in a["hits"] if h["reason"] == "spoiler_window"}))
    line = f"chapter {chapter} chunk {chunk}: injected [{injected}]"
    if blocked:
        line += f"; spoiler-blocked [{blocked}]"
    receipt = a["receipt"]
    print(f"{line}; receipt {receipt[:12]}")


def hits(chunk):
    """The hits of an assembly (surface -> term), then its context."""
    a = json.load(sys.stdin)
    found = ", ".join(f"{h['text']} -> {h['term']}" for h in a["hits"])
    print(f"chunk {chunk} hits: {found}")
    print(a["context"], end="")


def decisions(surface):
    """The decision on every record a surface names in an assembly."""
    a = json.load(sys.stdin)
    for h in a["hits"]:
        if h["text"] == surface:
            reason = f" ({h['reason']})" if h["reason"] else ""
            print(f"  {h['text']} chars {h['chars'][0]}..{h['chars'][1]} {h['term']}: {h['disposition']}{reason}")


def cascade():
    """What a cascade brought into an assembly, and by which record, then the context."""
    a = json.load(sys.stdin)
    for found in a.get("cascade", []):
        reason = f" ({found['reason']})" if found["reason"] else ""
        print(f"  {found['term']} brought by {found['by']} at depth {found['depth']}: {found['disposition']}{reason}")
    print(a["context"], end="")


def field(name):
    print(json.load(sys.stdin)[name])


def first_candidate(surface):
    """The id of the open candidate for `surface` in a `review list --json`."""
    for item in json.load(sys.stdin)["items"]:
        if item["type"] == "candidate" and item["surface"] == surface:
            print(item["id"])
            return
    sys.exit(f"no candidate for {surface} in the review queue")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    try:
        {"split": split, "chunk-line": chunk_line, "hits": hits, "decisions": decisions, "cascade": cascade,
         "field": field, "first-candidate": first_candidate}[command](*args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader has gone (`| head`): that is success, as it is for lorebank itself.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
