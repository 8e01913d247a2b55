#!/usr/bin/env python3
"""Hostile XLSX workbooks for measuring the input limits (docs/benchmarks.md,
"Hostile inputs"), and the small XLSX and SillyTavern seeds of `fuzz_import`.

    scripts/hostile_inputs.py workbooks DIR   # huge-cell, million-rows, shared-strings, far-cell .xlsx
    scripts/hostile_inputs.py seeds DIR       # fuzz/corpus/fuzz_import seeds (each under 4 KiB)

A workbook is written by hand with zipfile (deflated), so the hostile ones are a few
hundred kilobytes to a few megabytes and take seconds to write.
"""

import json
import sys
import zipfile
from pathlib import Path

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"


def workbook(path, rows, shared=None, sheet="术语表"):
    """A one-sheet workbook: `rows` are chunks of the `<sheetData>` content (an
    iterable, so millions of rows are streamed), `shared` chunks of `<si>` elements."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        out.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/></Types>',
        )
        out.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        out.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{MAIN}" xmlns:r="{RELS}"><sheets><sheet name="{sheet}" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        strings = "" if shared is None else f'<Relationship Id="rId2" Type="{RELS}/sharedStrings" Target="sharedStrings.xml"/>'
        out.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{PKG}"><Relationship Id="rId1" Type="{RELS}/worksheet" Target="worksheets/sheet1.xml"/>{strings}</Relationships>',
        )
        with out.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as part:
            part.write(f'<worksheet xmlns="{MAIN}"><sheetData>'.encode())
            for chunk in rows:
                part.write(chunk.encode())
            part.write(b"</sheetData></worksheet>")
        if shared is not None:
            with out.open("xl/sharedStrings.xml", "w", force_zip64=True) as part:
                part.write(f'<sst xmlns="{MAIN}">'.encode())
                for chunk in shared:
                    part.write(chunk.encode())
                part.write(b"</sst>")


def inline(ref, text):
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


def header():
    return f'<row r="1">{inline("A1", "src")}{inline("B1", "dst")}</row>'


def workbooks(directory):
    directory.mkdir(parents=True, exist_ok=True)
    # One cell of 500 MB.
    def huge():
        yield header()
        yield '<row r="2"><c r="A2" t="inlineStr"><is><t>'
        block = "林" * (1 << 20)
        for _ in range(500 // 3):
            yield block
        yield "</t></is></c></row>"

    workbook(directory / "huge-cell.xlsx", huge())

    # A million rows of 1 KB.
    def million():
        yield header()
        note = "x" * 1000
        for row in range(2, 1_000_002):
            yield f'<row r="{row}">{inline(f"A{row}", "林动")}{inline(f"C{row}", note)}</row>'

    workbook(directory / "million-rows.xlsx", million())

    # Five million shared strings.
    workbook(
        directory / "shared-strings.xlsx",
        iter([header()]),
        shared=("<si><t>剑</t></si>" * 1000 for _ in range(5000)),
    )

    # A cell reference past the last column and row of a sheet.
    workbook(
        directory / "far-cell.xlsx",
        iter([header(), f'<row r="2">{inline("ZZZZZZZZZZZZ99999999999999", "远")}</row>']),
    )


def seeds(directory):
    """Seeds of `fuzz_import`: the first byte picks the format (the index in
    `interchange::Format::ALL`), the rest is the file."""
    directory.mkdir(parents=True, exist_ok=True)
    linguagacha_xlsx, ainiee_xlsx, sillytavern = 4, 6, 7
    tmp = directory / "tmp.xlsx"

    def seed(name, pick, content):
        data = bytes([pick]) + content
        assert len(data) <= 4096, (name, len(data))
        (directory / name).write_bytes(data)

    names = [f"林{chr(0x4E00 + n)}" for n in range(120)]
    rows = [header()] + [
        f'<row r="{n + 2}">{inline(f"A{n + 2}", name)}{inline(f"B{n + 2}", f"Линь {n}")}</row>' for n, name in enumerate(names)
    ]
    workbook(tmp, iter(rows))
    seed("linguagacha-xlsx-many-rows", linguagacha_xlsx, tmp.read_bytes())
    ainiee = [f'<row r="1">{inline("A1", "原文")}{inline("B1", "译文")}</row>'] + rows[1:]
    workbook(tmp, iter(ainiee), sheet="Sheet1")
    seed("ainiee-xlsx-many-rows", ainiee_xlsx, tmp.read_bytes())
    shared_rows = [header()] + [f'<row r="{n + 2}"><c r="A{n + 2}" t="s"><v>{n}</v></c></row>' for n in range(120)]
    workbook(tmp, iter(shared_rows), shared=iter(f"<si><t>{name}</t></si>" for name in names[:120]))
    seed("linguagacha-xlsx-shared-strings", linguagacha_xlsx, tmp.read_bytes())
    workbook(tmp, iter([header(), f'<row r="2">{inline("ZZZZZZZZZZZZ99999999999999", "远")}</row>']))
    seed("xlsx-cell-past-the-sheet", linguagacha_xlsx, tmp.read_bytes())
    tmp.unlink()

    keys = [f"萧{chr(0x4E00 + n)}" for n in range(120)]
    entry = {
        "uid": 1,
        "key": keys,
        "keysecondary": keys[:60],
        "comment": "Сяо Янь",
        "content": "萧炎 → Сяо Янь",
        "constant": False,
        "selectiveLogic": 0,
    }
    seed("sillytavern-many-keys", sillytavern, json.dumps({"entries": {"1": entry}}, ensure_ascii=False).encode())
    entries = {str(n): {"uid": n, "key": [name], "comment": f"Линь {n}", "content": name} for n, name in enumerate(names[:40])}
    seed("sillytavern-many-entries", sillytavern, json.dumps({"entries": entries}, ensure_ascii=False).encode())


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("workbooks", "seeds"):
        sys.exit(__doc__)
    {"workbooks": workbooks, "seeds": seeds}[sys.argv[1]](Path(sys.argv[2]))
