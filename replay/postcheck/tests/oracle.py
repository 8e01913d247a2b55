"""The case forms of common nouns and adjective + noun phrases, by pymorphy3.

Reads lines `phrase<TAB>gender` (m, f, n) on stdin; writes one JSON list of forms per
line: the genitive, dative, accusative, instrumental and prepositional singular of the
phrase, where leading adjectives agree with the head noun (the first word that is not
an adjective) and words after the head stay. The oracle of tests/oracle.rs.
"""
import json
import sys

import pymorphy3

GENDERS = {"m": "masc", "f": "femn", "n": "neut"}
CASES = ["gent", "datv", "accs", "ablt", "loct"]

morph = pymorphy3.MorphAnalyzer()


def keep_case(template, word):
    return word[:1].upper() + word[1:] if template[:1].isupper() else word


def noun_parse(word, gender):
    parses = [p for p in morph.parse(word) if p.tag.POS == "NOUN" and p.tag.case == "nomn" and p.tag.number == "sing"]
    same = [p for p in parses if p.tag.gender == gender]
    return (same or parses or [None])[0]


def adjective_parse(word, gender):
    parses = [p for p in morph.parse(word) if p.tag.POS == "ADJF" and p.tag.case == "nomn" and p.tag.gender == gender]
    return parses[0] if parses else None


def forms(phrase, gender):
    words = phrase.split()
    gender = GENDERS[gender]
    head = 0
    while head < len(words) - 1 and adjective_parse(words[head].lower(), gender) is not None:
        head += 1
    noun = noun_parse(words[head].lower(), gender)
    if noun is None:
        return []
    animacy = noun.tag.animacy or "inan"
    out = []
    for case in CASES:
        line = []
        for word in words[:head]:
            adjective = adjective_parse(word.lower(), gender)
            wanted = {case, gender, "sing"}
            if case == "accs" and gender == "masc":
                wanted.add(animacy)
            inflected = adjective.inflect(wanted)
            line.append(keep_case(word, inflected.word) if inflected else word)
        inflected = noun.inflect({case, "sing"})
        line.append(keep_case(words[head], inflected.word) if inflected else words[head])
        line.extend(words[head + 1:])
        form = " ".join(line)
        if form.lower() != phrase.lower() and form not in out:
            out.append(form)
    return out


for line in sys.stdin:
    phrase, gender = line.rstrip("\n").split("\t")
    print(json.dumps(forms(phrase, gender), ensure_ascii=False))
