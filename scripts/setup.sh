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
#   * chromium, chromium-driver, fonts-noto-cjk: the headless browser the audit page's
#     test drives through WebDriver (tests/ui_browser.rs), and a font for its CJK text
# Idempotent: skips what is already there. Needs root or sudo for apt-get.
set -euo pipefail

APT_PACKAGES=(libopencc-dev opencc unicode-data bzip2 pkg-config chromium chromium-driver fonts-noto-cjk)
PIP_PACKAGES=(jieba==0.42.1 pyahocorasick==2.3.1 httpx==0.28.1 schemathesis==4.32.5 openpyxl==3.1.5 lxml==6.1.3 pymorphy3==2.0.6 pymorphy3-dicts-ru==2.4.417150.4580142)

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

if ! python3 -c 'import jieba, ahocorasick, httpx, schemathesis, openpyxl, lxml, pymorphy3' 2>/dev/null; then
    echo "setup: installing ${PIP_PACKAGES[*]} with pip"
    python3 -m pip install --quiet --disable-pip-version-check "${PIP_PACKAGES[@]}"
fi

command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust with rustup first" >&2; exit 1; }
echo "setup: ok"
