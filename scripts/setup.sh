#!/usr/bin/env bash
# Installs what building and testing lorebank needs on Debian 12 with rustup:
#   * libopencc-dev, opencc: OpenCC, from which normalization fold tables are built
#   * unicode-data, bzip2: Unicode's NormalizationTest.txt (bz2) for the NFKC conformance test
#   * jieba, pyahocorasick (PyPI): a real 349k-word key set and an independent
#     leftmost-longest matcher for the differential tests
#   * httpx (PyPI): the HTTP client of the pipeline example (examples/pipeline),
#     which a test runs against a live server
#   * schemathesis (PyPI): the contract run of the HTTP API (scripts/contract.sh)
#   * openpyxl, lxml (PyPI): the parsers LinguaGacha and AiNiee read XLSX with, and
#     an XML validator, which the interchange tests open exported files with
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
# Idempotent: skips what is already there. Needs root or sudo for apt-get.
set -euo pipefail

APT_PACKAGES=(libopencc-dev opencc unicode-data bzip2 pkg-config chromium chromium-driver fonts-noto-cjk nats-server)
PIP_PACKAGES=(jieba==0.42.1 pyahocorasick==2.3.1 httpx==0.28.1 schemathesis==4.32.5 openpyxl==3.1.5 lxml==6.1.3 pymorphy3==2.0.6 pymorphy3-dicts-ru==2.4.417150.4580142 onnx==1.23.2)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for package in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]} with apt-get"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c 'import jieba, ahocorasick, httpx, schemathesis, openpyxl, lxml, pymorphy3, onnx' 2>/dev/null; then
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

command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust with rustup first" >&2; exit 1; }
echo "setup: ok"
