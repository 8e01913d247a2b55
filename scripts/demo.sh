#!/usr/bin/env bash
# The main job on the bundled example book (examples/wuchuan, 雾川灯录): installs what
# is missing, builds lorebank, then tells the whole story a translation team lives:
# build the book's ledger, assemble the context of every chunk, revise a term, audit
# a chapter, list the chunks to re-translate, roll back, prove that every recorded
# context replays byte for byte, hand the glossary to other tools, check a
# translation, and govern the book (owners, a conflict policy, who may read what, a
# style rule, a cast list), and let a note bring the record it names (cascading
# activation), and show a term the model got wrong with an earlier checked sentence
# (demonstrations). Also runs the Japanese sample.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
echo "demo: building lorebank (the first build takes a few minutes)"
cargo build --quiet --bin lorebank
BIN="${CARGO_TARGET_DIR:-target}/debug/lorebank"
lorebank() { "$BIN" "$@"; }
report() { python3 scripts/demo_report.py "$@"; }
json_field() { report field "$1"; }

WORK="${CARGO_TARGET_DIR:-target}/demo"
rm -rf "$WORK" && mkdir -p "$WORK/chunks"
export LOREBANK_BOOK="$WORK/wuchuan.lorebank"
step() { printf '\n==== %s\n' "$*"; }

step "1. Create the book with the Chinese normalization profile, import its glossary"
lorebank init --profile zh --actor human:editor
lorebank apply examples/wuchuan/glossary.jsonl --actor import:example
lorebank show --chapter 1

step "2. Assemble every chunk of chapters 1-5 (each chunk's receipt feeds the next)"
# Split each chapter at its '---' lines into chunk files.
for chapter_file in examples/wuchuan/chapters/0[1-5].txt; do
    chapter=$((10#$(basename "$chapter_file" .txt)))
    report split "$chapter_file" "$WORK/chunks/$chapter"
    prev=()
    for chunk_file in "$WORK/chunks/$chapter"-*.txt; do
        chunk=$(basename "$chunk_file" .txt); chunk=${chunk#*-}
        out=$(lorebank --json assemble --chapter "$chapter" --chunk "$chunk" --text "$chunk_file" "${prev[@]}")
        receipt=$(json_field receipt <<<"$out")
        echo "$receipt" >> "$WORK/receipts.txt"
        report chunk-line "$chapter" "$chunk" <<<"$out"
        prev=(--prev "$receipt")
    done
done

step "3. What the translator of chapter 3, chunk 2 (a letter in traditional characters) was given"
lorebank assemble --chapter 3 --chunk 2 --text "$WORK/chunks/3-2.txt" --dry-run 2>/dev/null
echo "-- and its simplified twin injects the same records:"
lorebank assemble --chapter 3 --chunk 2-twin --text examples/wuchuan/chapters/03-traditional-twin.txt --dry-run 2>/dev/null

step "4. Chapter 4, chunk 2: after the reveal, 顾寒川 is the Night Sect's master (T-4, not T-2)"
lorebank assemble --chapter 4 --chunk 2 --text "$WORK/chunks/4-2.txt" --dry-run 2>/dev/null
before=$(lorebank --json snapshot | json_field revision)

step "5. An editor reviews 灯宗 (was an unreviewed import) and renames 雾川"
echo "what the rename would re-open, before anything is written (impact --with):"
printf '%s\n' '{"term_put":{"id":"T-7","src":"雾川","dst":"Туманная река","kind":"place","gender":"f","decl":["Туманной реки","Туманную реку"]}}' \
    > "$WORK/rename.jsonl"
lorebank impact --with "$WORK/rename.jsonl"
lorebank term put --id T-10 --src 灯宗 --dst "Секта Фонаря" --kind organization --gender f \
    --decl "Секты Фонаря,Секте Фонаря" --actor human:editor --source review-1
lorebank term put --id T-7 --src 雾川 --dst "Туманная река" --kind place --gender f \
    --decl "Туманной реки,Туманную реку" --actor human:editor --source review-1
lorebank diff "$before" "$(lorebank --json snapshot | json_field revision)"
echo "names against the standard (Palladius; a place translated by meaning is flagged until an editor marks it name_exception):"
lorebank names lint

step "6. Audit chapter 1: what was injected, from which event, what is stale now"
lorebank audit --chapter 1

step "7. Impact: the recorded chunks whose context would change (the re-translation list)"
lorebank impact

step "8. Roll the glossary back to revision $before"
lorebank rollback --to "$before" --reason "keep the published names" --actor human:editor
echo "head snapshot:        $(lorebank --json snapshot | json_field snapshot)"
echo "revision $before snapshot: $(lorebank --json snapshot --as-of "$before" | json_field snapshot)"
lorebank impact

step "9. Prove replay: every recorded receipt reproduces its context byte for byte"
n_ok=0
while read -r receipt; do
    lorebank replay "$receipt" >/dev/null 2>&1 || { echo "replay $receipt FAILED" >&2; exit 1; }
    n_ok=$((n_ok + 1))
done < "$WORK/receipts.txt"
echo "$n_ok of $(wc -l < "$WORK/receipts.txt") receipts replayed byte-identically"
lorebank verify

step "10. Hand the glossary of chapter 3 to the tools a team already runs (spoiler-safe)"
lorebank export --format sillytavern --chapter 3 -o "$WORK/wuchuan-ch3.world.json"
for late in 夜宗宗主 "раскрыт в главе 4"; do
    if grep -q "$late" "$WORK/wuchuan-ch3.world.json"; then echo "spoiler in the chapter-3 export: $late" >&2; exit 1; fi
done
echo "the SillyTavern World Info for chapter 3 holds nothing from the chapter-4 reveal (夜宗宗主, T-4's note)"
lorebank export --format galtransl --chapter 3 -o "$WORK/wuchuan-ch3.gpt-dict.txt"
cat "$WORK/wuchuan-ch3.gpt-dict.txt"
echo "-- and a GalTransl dictionary comes back into a new book with a report of what it could not carry:"
LOREBANK_BOOK="$WORK/from-galtransl.lorebank" lorebank init --profile zh --actor human:editor >/dev/null
LOREBANK_BOOK="$WORK/from-galtransl.lorebank" lorebank import "$WORK/wuchuan-ch3.gpt-dict.txt"

step "11. Close the loop: check a translation, review what it flags, raise a new name"
first_receipt=$(head -1 "$WORK/receipts.txt")
echo "-- a translation of chapter 1, chunk 1 that renders 长明灯 as a plain 'светильник' and gives 沈照 a feminine verb:"
lorebank check --receipt "$first_receipt" --translation examples/wuchuan/review/01-1.ru.txt --propose --actor tool:postcheck
lorebank review list
lorebank review accept T-9 --actor human:editor
echo "-- a new chapter brings in a name no entry covers:"
lorebank scan --chapter 6 --chunk 1 --text examples/wuchuan/review/06-1.txt --actor tool:names
candidate=$(lorebank --json review list | report first-candidate 林晚)
lorebank review accept "$candidate" --dst "Линь Вань" --gender f --kind character --actor human:editor \
    --source review-ticket-7
lorebank assemble --chapter 6 --chunk 1 --text examples/wuchuan/review/06-1.txt --dry-run 2>/dev/null
lorebank audit --chapter 1 | grep -E "^  check" || { echo "the audit does not show the check" >&2; exit 1; }

step "12. Governance: owners, one conflict policy, who may read what, style rules, a cast list"
G=examples/wuchuan/governance
echo "-- a second sense of 长明 (a chant word) beside the sword: in chapter 5, both pass their gates"
lorebank apply "$G/1-senses.jsonl" --actor human:editor >/dev/null
lorebank --json assemble --chapter 5 --chunk 2 --text "$WORK/chunks/5-2.txt" --dry-run | report decisions 长明
echo "-- the book declares its parties, default owners and release, and one conflict policy (prefer_specific),"
echo "   and a style rule for dialogue; the sword's secondary key (no sutra is chanted) settles 长明:"
lorebank apply "$G/2-governance.jsonl" --actor human:editor >/dev/null
lorebank --json assemble --chapter 5 --chunk 2 --text "$WORK/chunks/5-2.txt" --dry-run | report decisions 长明
echo "-- T-4's note tells the chapter-4 reveal: only the editors may read it"
lorebank term edit T-4 --note-release-to human:editors --actor human:editor --source governance-review-1 >/dev/null
lorebank show --chapter 4 | grep -A1 "T-4 "
echo "-- what the pipeline (party tool:pipeline) is given of T-4: no note, in show, export and assembly"
lorebank --party tool:pipeline show --chapter 4 | grep -A1 "T-4 "
lorebank --party tool:pipeline export --format sillytavern --chapter 4 -o "$WORK/pipeline-ch4.world.json" 2>/dev/null
lorebank export --format sillytavern --chapter 4 -o "$WORK/editors-ch4.world.json" 2>/dev/null
grep -q "раскрыт в главе 4" "$WORK/editors-ch4.world.json" || { echo "the full export lost T-4's note" >&2; exit 1; }
if grep -q "раскрыт в главе 4" "$WORK/pipeline-ch4.world.json"; then echo "the editors' note reached the pipeline" >&2; exit 1; fi
echo "the pipeline's World Info for chapter 4 has T-4 without the editors' note"
receipt=$(lorebank --party tool:pipeline --json assemble --chapter 4 --chunk 2 --text "$WORK/chunks/4-2.txt" | json_field receipt)
lorebank --party tool:pipeline replay "$receipt" >/dev/null
echo "the pipeline's receipt $receipt names its party and replays byte for byte"
echo "-- the style rule is injected where there is dialogue (3-1), not in the letter (3-2):"
lorebank --party tool:pipeline assemble --chapter 3 --chunk 1 --text "$WORK/chunks/3-1.txt" --dry-run 2>/dev/null | grep -A1 "^\[rules\]"
# Each check reads the whole output before it greps: `cmd | grep -q` lets grep close the
# pipe at its first match, and with pipefail the writer's broken pipe fails the check.
letter=$(lorebank --party tool:pipeline assemble --chapter 3 --chunk 2 --text "$WORK/chunks/3-2.txt" --dry-run 2>/dev/null)
if grep -q "^\[rules\]" <<<"$letter"; then
    echo "the dialogue rule was injected into the letter" >&2; exit 1
fi
echo "(no [rules] block in chunk 3-2)"
echo "-- the publisher's cast list, and what the book does not cover:"
lorebank expect import "$G/cast.txt" --actor human:editor
lorebank coverage
lorebank profile check --require 3
lorebank export --format profile 2>/dev/null | head -5

step "13. Cascading activation (opt-in): a note that names another record brings it in"
echo "-- the sword's note names the lamp it must not be confused with; chapter 2, chunk 1 mentions only the sword:"
lorebank term edit T-8 --note "меч 沈照; не путать с 长明灯 (негасимой лампадой)" --actor human:editor >/dev/null
printf '%s\n' '{"cascade_set":{"depth":1}}' > "$WORK/cascade.jsonl"
lorebank apply "$WORK/cascade.jsonl" --actor human:editor
cascaded=$(lorebank --json assemble --chapter 2 --chunk 1 --text "$WORK/chunks/2-1.txt" --dry-run | report cascade)
printf '%s\n' "$cascaded"
if ! grep -q "T-9 brought by T-8" <<<"$cascaded"; then
    echo "the sword's note did not bring the lamp" >&2; exit 1
fi

step "14. Demonstrations (render format 3): a term the model got wrong comes with an earlier sentence"
echo "-- the lamp was rendered wrongly in chapter 1 (step 11); a translation of chapter 2, chunk 2 renders it, declined:"
# Chapter 1 has two chunks, so the fourth receipt of step 2 is chapter 2, chunk 2's.
lorebank check --receipt "$(sed -n 4p "$WORK/receipts.txt")" --translation examples/wuchuan/review/02-2.ru.txt \
    --actor tool:postcheck
printf '%s\n' '{"config_set":{"assembly":{"render_format":3}}}' > "$WORK/format-3.jsonl"
lorebank apply "$WORK/format-3.jsonl" --actor human:editor
echo "-- chapter 3, chunk 1 mentions the lamp: its line comes with the chapter-2 sentence"
lorebank assemble --chapter 3 --chunk 1 --text "$WORK/chunks/3-1.txt" 2>/dev/null | sed -n '/^\[examples\]/,/^\[summaries\]/p'
shown=$(lorebank assemble --chapter 3 --chunk 1 --text "$WORK/chunks/3-1.txt" --dry-run 2>/dev/null)
if ! grep -q "негасимую лампаду" <<<"$shown"; then
    echo "the lamp came without its example" >&2; exit 1
fi
lorebank audit --chapter 3 | grep -E "^  = " || { echo "the audit does not show the example" >&2; exit 1; }

step "15. The Japanese sample: katakana, hiragana, half-width and ruby meet one term"
export LOREBANK_BOOK="$WORK/wuchuan-ja.lorebank"
lorebank init --profile ja --actor human:editor >/dev/null
lorebank apply examples/wuchuan-ja/glossary.jsonl --actor import:example >/dev/null
report split examples/wuchuan-ja/chapter-01.txt "$WORK/chunks/ja"
for chunk in 1 2; do
    lorebank --json assemble --chapter 1 --chunk "$chunk" --text "$WORK/chunks/ja-$chunk.txt" | report hits "$chunk"
done
