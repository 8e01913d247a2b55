"""A deterministic stand-in for an OpenAI-compatible model server (tests/proxy.rs).

Usage: upstream.py LOG_FILE [--tls CERT KEY]. Prints its port on the first line of
stdout. Every request is appended to LOG_FILE as one JSON line (method, path,
authorization, body; over TLS also the server name the client sent (SNI) and the
protocol agreed by ALPN). With --tls it serves HTTPS with the PEM certificate chain
CERT and its key KEY; a client that refuses the certificate leaves no line.
The request's "model" decides the answer:

* ok: a chat completion whose text is TRANSLATION (streamed as server-sent events in
  pieces, usage in the last event, then `data: [DONE]`, when "stream" is true);
* fail: 500 with an error body;
* cut: a stream of two pieces, then the connection closes mid-chunk;
* hang: no answer for 30 s;
* names: the names of NAMES found in the last user message, each with the sentence
  (up to 。) it is first in, one name that is not in the text (INVENTED) and a
  full stop, as the JSON object `lorebank extract` asks for; names-fenced: the same
  inside a Markdown code fence; malformed: prose instead of JSON; names-first: names
  for chapter 1, prose for any other; huge: an answer of over 3 MiB;
* translator:follow=P:misgender=Q:seed=S: a stand-in translator for `lorebank eval`.
  It reads the glossary lines (`SRC -> DST #tags; forms`) of the system message and,
  for each whose SRC is in the text, writes DST with probability P (else a made-up
  name), followed by a past-tense verb of the line's gender (`m`, `f`), of the other
  gender with probability Q; then pads the answer to 1.2 times the text's length.
  Each draw is a hash of S, the text and SRC: the same request, the same answer;
* judge: for each conflict of the user message (the JSON `lorebank adjudicate` sends),
  a verdict naming its first term; judge-stranger: a verdict naming a term the
  conflict does not have; judge-decides: like judge, with the gender `f` for a gender
  conflict and, for a shared rendering, its last term with the rendering А-Чжао.
"""

import hashlib
import json
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TRANSLATION = "Царь обезьян поклонился, и Сунь Укун вышел за ворота."
LOCK = threading.Lock()
# Names the extraction stand-in knows: surface, kind, gender, reading.
NAMES = [
    ("孙悟空", "person", "m", "Sūn Wùkōng"),
    ("花果山", "place", None, "Huāguǒ Shān"),
    ("美猴王", "person", "m", None),
    ("须菩提祖师", "person", "m", "Xūpútí Zǔshī"),
]
INVENTED = "李逍遥"


def glossary_lines(system):
    """(src, dst, gender) of every format-1 glossary line in a system message."""
    lines = []
    for line in system.split("\n"):
        if " -> " not in line:
            continue
        src, rest = line.split(" -> ", 1)
        rest = rest.removesuffix(" [unverified]").split("; ", 1)[0]
        dst, _, tags = rest.partition(" #")
        tags = [tag.strip() for tag in tags.split(",")]
        gender = "m" if "m" in tags else "f" if "f" in tags else None
        lines.append((src, dst, gender))
    return lines


def draw(*parts):
    """A number in [0, 1) from the hash of `parts`."""
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def translation(model, system, text):
    """The stand-in translator's answer (see the module's docstring)."""
    params = dict(part.split("=", 1) for part in model.split(":")[1:])
    follow, misgender, seed = float(params["follow"]), float(params["misgender"]), params["seed"]
    sentences = []
    for src, dst, gender in glossary_lines(system):
        if src not in text:
            continue
        name = dst if draw(seed, "follow", text, src) < follow else "Безымянный"
        if gender is not None and draw(seed, "gender", text, src) < misgender:
            gender = "f" if gender == "m" else "m"
        verb = {"m": "сказал", "f": "сказала"}.get(gender, "сказало")
        sentences.append(f"{name} {verb} своё слово.")
    answer = " ".join(sentences)
    while len(answer) < 1.2 * len(text):
        answer += " Ветер шумел над рекой."
    return answer.strip()


def extraction(text):
    """The names of NAMES in `text`, and INVENTED, as `lorebank extract` asks."""
    sentences = [part + "。" for part in text.split("。")]
    names = []
    for surface, kind, gender, reading in NAMES:
        if surface in text:
            evidence = next(sentence for sentence in sentences if surface in sentence)
            names.append({"surface": surface, "kind": kind, "gender": gender, "reading": reading,
                          "evidence": evidence.strip()})
    names.append({"surface": INVENTED, "kind": "person", "gender": "m", "reading": None,
                  "evidence": INVENTED + "笑道。"})
    names.append({"surface": "。", "kind": "other", "gender": None, "reading": None, "evidence": "。"})
    return json.dumps({"names": names}, ensure_ascii=False)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        line = {
            "method": self.command,
            "path": self.path,
            "authorization": self.headers.get("Authorization"),
            "body": body,
        }
        if isinstance(self.connection, ssl.SSLSocket):
            line["sni"] = getattr(self.connection, "sni", None)
            line["alpn"] = self.connection.selected_alpn_protocol()
        with LOCK, open(sys.argv[1], "a", encoding="utf-8") as log:
            log.write(json.dumps(line, ensure_ascii=False) + "\n")

    def send_json(self, status, value):
        data = json.dumps(value, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        self.record(None)
        self.send_json(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.record(body)
        model = body.get("model")
        if model == "hang":
            time.sleep(30)
            return
        if model == "fail":
            self.send_json(500, {"error": {"message": "the stand-in failed", "type": "server_error"}})
            return
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        content = TRANSLATION
        if model == "names-first":
            user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
            model = "names" if user.startswith("Chapter 1.") else "malformed"
        if model in ("names", "names-fenced"):
            user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
            content = extraction(user)
            if model == "names-fenced":
                content = "```json\n" + content + "\n```"
        if isinstance(model, str) and model.startswith("translator:"):
            system = [m["content"] for m in body["messages"] if m["role"] == "system"][0]
            user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
            content = translation(model, system, user)
        if model in ("judge", "judge-stranger", "judge-decides"):
            user = json.loads([m["content"] for m in body["messages"] if m["role"] == "user"][-1])
            verdicts = []
            for conflict in user["conflicts"]:
                term = conflict["terms"][0]["id"] if model != "judge-stranger" else "T-999"
                verdict = {"conflict": conflict["conflict"], "term": term,
                           "finding": "the stand-in judged " + conflict["kind"]}
                if model == "judge-decides" and conflict["kind"] == "gender":
                    verdict["gender"] = "f"
                if model == "judge-decides" and conflict["kind"] == "shared_rendering":
                    verdict["term"] = conflict["terms"][-1]["id"]
                    verdict["dst"] = "А-Чжао"
                verdicts.append(verdict)
            content = json.dumps({"verdicts": verdicts}, ensure_ascii=False)
        if model == "huge":
            content = "名" * (1 << 20)
        if model == "malformed":
            content = "Here are the names: 孙悟空 (person), 花果山 (place)."
        if not body.get("stream"):
            self.send_json(200, {
                "id": "chatcmpl-1", "object": "chat.completion", "model": "stand-in-1",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
                "usage": usage,
            })
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = [TRANSLATION[i:i + 9] for i in range(0, len(TRANSLATION), 9)]
        for n, piece in enumerate(pieces):
            event = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "stand-in-1",
                     "choices": [{"index": 0, "delta": {"content": piece}}]}
            self.chunk(("data: " + json.dumps(event, ensure_ascii=False) + "\n\n").encode())
            if model == "cut" and n == 1:
                self.wfile.write(b"40\r\ndata: {\"choi")
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
        last = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "stand-in-1",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}
        self.chunk(("data: " + json.dumps(last) + "\n\n").encode())
        self.chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class TlsServer(ThreadingHTTPServer):
    """Serves HTTPS: the handshake is made in the connection's own thread, so a
    client that refuses the certificate stops nothing else."""

    def __init__(self, address, handler, cert, key):
        super().__init__(address, handler)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.context.set_alpn_protocols(["http/1.1"])

        def remember_sni(sock, name, _context):
            sock.sni = name

        self.context.sni_callback = remember_sni

    def finish_request(self, request, client_address):
        try:
            request = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            request.close()
            return
        try:
            super().finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


if len(sys.argv) == 5 and sys.argv[2] == "--tls":
    server = TlsServer(("127.0.0.1", 0), Handler, sys.argv[3], sys.argv[4])
else:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
