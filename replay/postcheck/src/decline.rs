//! Russian case forms of a rendering, rule set [`RULES_VERSION`](crate::RULES_VERSION).
//!
//! The rules read only the spelling of `dst`, its gender and its kind: no dictionary,
//! no stress. docs/postcheck.md has the table and what the rules cannot do.

use ledger_model::Gender;
use serde::{Deserialize, Serialize};

/// Generated case forms of a rendering (never the base form itself), and the rule
/// that made them.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Forms {
    /// The forms, in the order of the cases (genitive, dative, accusative,
    /// instrumental, prepositional), alternatives next to each other, duplicates and
    /// the base form left out.
    pub forms: Vec<String>,
    /// The rule that made them, one of [`RULES`].
    pub rule: &'static str,
}

/// The stored shape of [`Forms`]: the same fields, the rule read as a string and
/// refused unless it is one of [`RULES`].
#[derive(Deserialize)]
struct FormsWire {
    forms: Vec<String>,
    rule: String,
}

impl<'de> Deserialize<'de> for Forms {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Forms, D::Error> {
        let wire = FormsWire::deserialize(deserializer)?;
        let rule = RULES
            .iter()
            .find(|rule| **rule == wire.rule)
            .copied()
            .ok_or_else(|| serde::de::Error::custom(format!("unknown declension rule {:?}", wire.rule)))?;
        Ok(Forms { forms: wire.forms, rule })
    }
}

/// A name that ends in `-о`, `-у`, `-э`, `-и`, `-е`, `-ю`, `-ы`, a feminine name that
/// ends in a consonant, a neuter or plural name: no forms.
pub const INDECLINABLE: &str = "indeclinable";
/// A name whose last word ends in a hard consonant (`Сяо Чжан` → `Сяо Чжана`).
pub const NAME_CONSONANT_M: &str = "name_consonant_m";
/// A name whose last word ends in `-ь` or `-й` (`Сяо Янь` → `Сяо Яня`).
pub const NAME_SOFT_M: &str = "name_soft_m";
/// A name whose last word ends in `-а`/`-я` (first declension: `Сакура` → `Сакуры`).
pub const NAME_A: &str = "name_a";
/// A title from a short list before a name: both decline (`Старейшина Гу` →
/// `Старейшины Гу`, `мастер Линь Дун` → `мастера Линь Дуна`).
pub const NAME_TITLE: &str = "name_title";
/// A common noun (phrase head) in a hard consonant (`мастер` → `мастера`).
pub const NOUN_M: &str = "noun_m";
/// A masculine noun in `-ь`/`-й` (`хранитель` → `хранителя`).
pub const NOUN_M_SOFT: &str = "noun_m_soft";
/// A noun in `-а`/`-я` (`секта` → `секты`).
pub const NOUN_A: &str = "noun_a";
/// A feminine noun in `-ь` (`тень` → `тени`).
pub const NOUN_F_SOFT: &str = "noun_f_soft";
/// A neuter noun in `-о`/`-е` (`зеркало` → `зеркала`).
pub const NOUN_N: &str = "noun_n";
/// A neuter noun in `-мя` (`пламя` → `пламени`).
pub const NOUN_MYA: &str = "noun_mya";
/// Not Cyrillic, a plural, or an ending the rules do not know: no forms.
pub const UNKNOWN_PATTERN: &str = "unknown_pattern";

/// Nothing generated on purpose: the base-only baseline ([`check_base_only`](crate::check_base_only)).
pub const BASE_ONLY: &str = "base_only";

/// Every rule name of this rule set.
pub const RULES: &[&str] = &[
    INDECLINABLE,
    NAME_CONSONANT_M,
    NAME_SOFT_M,
    NAME_A,
    NAME_TITLE,
    NOUN_M,
    NOUN_M_SOFT,
    NOUN_A,
    NOUN_F_SOFT,
    NOUN_N,
    NOUN_MYA,
    UNKNOWN_PATTERN,
    BASE_ONLY,
];

const VOWELS: &str = "аеёиоуыэюя";
const HUSHING: &str = "жшчщ";
const VELAR: &str = "гкх";

fn is_cyrillic_word(word: &str) -> bool {
    let mut letters = 0;
    for c in word.chars() {
        if ('\u{400}'..='\u{4FF}').contains(&c) {
            letters += 1;
        } else if c != '-' {
            return false;
        }
    }
    letters > 0
}

/// A word split into the part kept and the lowercased ending the rules look at.
struct Word<'a> {
    text: &'a str,
    lower: String,
}

impl Word<'_> {
    fn ends(&self, ending: &str) -> bool {
        self.lower.ends_with(ending)
    }
    /// The letter `back` letters before the end (0 = last letter).
    fn letter(&self, back: usize) -> Option<char> {
        self.lower.chars().rev().nth(back)
    }
    fn letter_in(&self, back: usize, set: &str) -> bool {
        self.letter(back).is_some_and(|c| set.contains(c))
    }
    /// The word without its last `drop` letters, followed by `ending`.
    fn with(&self, drop: usize, ending: &str) -> String {
        let keep = self.text.chars().count().saturating_sub(drop);
        let mut out: String = self.text.chars().take(keep).collect();
        out.push_str(ending);
        out
    }
}

fn word(text: &str) -> Word<'_> {
    Word { text, lower: text.to_lowercase() }
}

/// The grammatical class an adjective's ending marks.
fn adjective_gender(w: &Word) -> Option<Gender> {
    let letters = w.lower.chars().count();
    if w.ends("ый") || (w.ends("ий") && letters >= 4) || (w.ends("ой") && letters >= 5) {
        Some(Gender::Masculine)
    } else if (w.ends("ая") || w.ends("яя")) && letters >= 4 {
        Some(Gender::Feminine)
    } else if (w.ends("ое") || w.ends("ее")) && letters >= 4 {
        Some(Gender::Neuter)
    } else {
        None
    }
}

/// Whether a noun with this spelling can have this gender in the nominative.
fn noun_can_be(w: &Word, gender: Gender) -> bool {
    let last = w.letter(0).unwrap_or(' ');
    match gender {
        Gender::Masculine => !VOWELS.contains(last) || last == 'а' || last == 'я',
        Gender::Feminine => last == 'а' || last == 'я' || last == 'ь',
        Gender::Neuter => w.ends("о") || w.ends("е") || w.ends("мя"),
        Gender::Plural => false,
    }
}

/// Case slots a phrase is generated in, with alternatives per word.
type Slots = Vec<Vec<String>>;

/// The adjective's forms per slot: genitive, dative, accusative, instrumental,
/// prepositional (the accusative slot only for the feminine).
fn adjective_forms(w: &Word, gender: Gender) -> Slots {
    let stem_velar_or_hushing = |back| w.letter_in(back, VELAR) || w.letter_in(back, HUSHING);
    let one = |ending: &str| vec![w.with(2, ending)];
    match gender {
        Gender::Feminine if w.ends("яя") => vec![one("ей"), one("ей"), one("юю"), one("ей"), one("ей")],
        Gender::Feminine => {
            let oblique = if w.letter_in(2, HUSHING) || w.letter_in(2, "ц") {
                vec![w.with(2, "ой"), w.with(2, "ей")]
            } else {
                one("ой")
            };
            vec![oblique.clone(), oblique.clone(), one("ую"), oblique.clone(), oblique]
        }
        _ => {
            let soft = w.ends("ее") || (w.ends("ий") && !w.letter_in(2, VELAR));
            let instrumental = if soft || stem_velar_or_hushing(2) { "им" } else { "ым" };
            if soft {
                vec![one("его"), one("ему"), one(instrumental), one("ем")]
            } else {
                vec![one("ого"), one("ому"), one(instrumental), one("ом")]
            }
        }
    }
}

/// A first-declension word (`-а`, `-я`, `-ия`) per slot.
fn first_declension(w: &Word) -> Slots {
    let one = |ending: &str| vec![w.with(1, ending)];
    if w.ends("ия") {
        return vec![one("и"), one("и"), one("ю"), one("ей"), one("и")];
    }
    if w.ends("я") {
        return vec![one("и"), one("е"), one("ю"), one("ей"), one("е")];
    }
    let genitive = if w.letter_in(1, VELAR) || w.letter_in(1, HUSHING) { "и" } else { "ы" };
    let instrumental = if w.letter_in(1, HUSHING) || w.letter_in(1, "ц") {
        vec![w.with(1, "ой"), w.with(1, "ей")]
    } else {
        one("ой")
    };
    vec![one(genitive), one("е"), one("у"), instrumental, one("е")]
}

/// A masculine word in a consonant, `-ь` or `-й`, per slot (the accusative is the
/// nominative or the genitive, both already covered).
fn second_declension_m(w: &Word) -> Slots {
    let one = |drop, ending: &str| vec![w.with(drop, ending)];
    if w.ends("ий") {
        return vec![one(1, "я"), one(1, "ю"), one(1, "ем"), one(1, "и")];
    }
    if w.ends("ь") || w.ends("й") {
        return vec![one(1, "я"), one(1, "ю"), one(1, "ем"), one(1, "е")];
    }
    // After ж ш ч щ ц the instrumental is -ем unstressed, -ом stressed; the stress is
    // unknown, so both are generated.
    let instrumental = if w.letter_in(0, HUSHING) || w.letter_in(0, "ц") {
        vec![w.with(0, "ем"), w.with(0, "ом")]
    } else {
        one(0, "ом")
    };
    vec![one(0, "а"), one(0, "у"), instrumental, one(0, "е")]
}

/// [`second_declension_m`] for a common noun, which may have a fleeting vowel: a noun
/// in `-ец`, `-ок`, `-ень` or `-онь` (`дворец` → `дворца`, `огонь` → `огня`, but
/// `мудрец` → `мудреца`) gets the forms with and without the vowel.
fn second_declension_m_noun(w: &Word) -> Slots {
    let mut slots = second_declension_m(w);
    let letters = w.lower.chars().count();
    let fleeting = letters >= 4 && (w.ends("ец") || w.ends("ок") || w.ends("ень") || w.ends("онь"));
    if !fleeting {
        return slots;
    }
    let soft = w.ends("ь");
    let drop = if soft { 3 } else { 2 };
    let kept: String = w.text.chars().take(letters - drop).collect();
    let tail: String = w.text.chars().skip(letters - drop + 1).collect::<String>().replace(['ь', 'Ь'], "");
    let short = format!("{kept}{tail}");
    let endings: &[&[&str]] = if soft {
        &[&["я"], &["ю"], &["ем"], &["е"]]
    } else if w.ends("ец") {
        &[&["а"], &["у"], &["ом", "ем"], &["е"]]
    } else {
        &[&["а"], &["у"], &["ом"], &["е"]]
    };
    for (slot, endings) in slots.iter_mut().zip(endings) {
        for ending in *endings {
            let form = format!("{short}{ending}");
            if !slot.contains(&form) {
                slot.push(form);
            }
        }
    }
    slots
}

/// The head noun's forms per slot and its rule, or `None` if the rules do not know it.
fn noun(w: &Word, gender: Option<Gender>) -> Option<(Slots, &'static str)> {
    let last = w.letter(0)?;
    let one = |drop, ending: &str| vec![w.with(drop, ending)];
    match gender {
        Some(Gender::Plural) => None,
        _ if w.ends("мя") && matches!(gender, None | Some(Gender::Neuter)) => {
            Some((vec![one(1, "ени"), one(1, "ени"), one(1, "енем"), one(1, "ени")], NOUN_MYA))
        }
        _ if last == 'а' || last == 'я' => {
            if gender == Some(Gender::Neuter) {
                return None;
            }
            Some((first_declension(w), NOUN_A))
        }
        Some(Gender::Feminine) if last == 'ь' => {
            Some((vec![one(1, "и"), one(1, "и"), one(0, ""), one(1, "ью"), one(1, "и")], NOUN_F_SOFT))
        }
        Some(Gender::Masculine) if last == 'ь' => Some((second_declension_m_noun(w), NOUN_M_SOFT)),
        None | Some(Gender::Masculine) if last == 'й' => Some((second_declension_m(w), NOUN_M_SOFT)),
        None | Some(Gender::Neuter) if w.ends("ие") => {
            Some((vec![one(1, "я"), one(1, "ю"), one(1, "ем"), one(1, "и")], NOUN_N))
        }
        None | Some(Gender::Neuter) if last == 'о' => {
            Some((vec![one(1, "а"), one(1, "у"), one(1, "ом"), one(1, "е")], NOUN_N))
        }
        None | Some(Gender::Neuter) if last == 'е' => {
            if w.letter_in(1, HUSHING) || w.letter_in(1, "ц") {
                Some((vec![one(1, "а"), one(1, "у"), one(1, "ем"), one(1, "е")], NOUN_N))
            } else {
                Some((vec![one(1, "я"), one(1, "ю"), one(1, "ем"), one(1, "е")], NOUN_N))
            }
        }
        None | Some(Gender::Masculine) if !VOWELS.contains(last) && last != 'ь' && last != '-' => {
            Some((second_declension_m_noun(w), NOUN_M))
        }
        _ => None,
    }
}

/// Every combination of the words' alternatives in one slot, joined by spaces.
fn combine(words: &[Vec<String>]) -> Vec<String> {
    let mut out = vec![String::new()];
    for alternatives in words {
        let mut next = Vec::with_capacity(out.len() * alternatives.len());
        for prefix in &out {
            for alternative in alternatives {
                let mut joined = prefix.clone();
                if !joined.is_empty() {
                    joined.push(' ');
                }
                joined.push_str(alternative);
                next.push(joined);
            }
        }
        out = next;
    }
    out
}

fn finish(base: &[&str], slots: Vec<Vec<Vec<String>>>, rule: &'static str) -> Forms {
    let base_lower = base.join(" ").to_lowercase();
    let mut forms: Vec<String> = Vec::new();
    for slot in slots {
        for form in combine(&slot) {
            if form.to_lowercase() != base_lower && !forms.contains(&form) {
                forms.push(form);
            }
        }
    }
    Forms { forms, rule }
}

fn none(rule: &'static str) -> Forms {
    Forms { forms: Vec::new(), rule }
}

/// The generated case forms of `dst` (genitive, dative, accusative, instrumental,
/// prepositional singular), from its gender, its kind and the ending of its words.
///
/// A transliterated name (kind `character` or no kind, every word capitalised, no
/// word an adjective) declines its last word only; anything else is a phrase whose
/// leading adjectives agree with the head noun that follows them, and whose words
/// after the head (a genitive tail) stay.
pub fn decline(dst: &str, gender: Option<Gender>, kind: Option<&str>) -> Forms {
    let words: Vec<&str> = dst.split_whitespace().collect();
    if words.is_empty() || !words.iter().all(|w| is_cyrillic_word(w)) {
        return none(UNKNOWN_PATTERN);
    }
    let parsed: Vec<Word> = words.iter().map(|w| word(w)).collect();
    let name_kind = matches!(kind, None | Some("character"));
    let capitalised = words.iter().all(|w| w.chars().next().is_some_and(char::is_uppercase));
    let has_adjective = parsed[..parsed.len() - 1].iter().any(|w| adjective_gender(w).is_some())
        || parsed[1..].iter().any(|w| w.lower.chars().count() >= 5 && (w.ends("ого") || w.ends("его")));
    if name_kind {
        if let Some(forms) = title_name(&words, &parsed, gender) {
            return forms;
        }
    }
    if name_kind && capitalised && !has_adjective {
        name(&words, &parsed, gender)
    } else {
        phrase(&words, &parsed, gender)
    }
}

/// The last word of a name per slot and its rule, or the rule that gives no forms.
fn name_slots(last: &Word, gender: Option<Gender>) -> Result<(Slots, &'static str), &'static str> {
    let final_letter = last.letter(0).ok_or(UNKNOWN_PATTERN)?;
    match gender {
        Some(Gender::Plural) => Err(UNKNOWN_PATTERN),
        Some(Gender::Neuter) => Err(INDECLINABLE),
        _ if final_letter == 'а' || final_letter == 'я' => Ok((first_declension(last), NAME_A)),
        Some(Gender::Feminine) => Err(INDECLINABLE),
        _ if final_letter == 'ь' || final_letter == 'й' => Ok((second_declension_m(last), NAME_SOFT_M)),
        _ if VOWELS.contains(final_letter) || final_letter == '-' => Err(INDECLINABLE),
        _ => Ok((second_declension_m(last), NAME_CONSONANT_M)),
    }
}

fn name(words: &[&str], parsed: &[Word], gender: Option<Gender>) -> Forms {
    let (slots, rule) = match name_slots(&parsed[parsed.len() - 1], gender) {
        Ok(declined) => declined,
        Err(rule) => return none(rule),
    };
    let prefix: Vec<Vec<String>> = words[..words.len() - 1].iter().map(|w| vec![(*w).to_owned()]).collect();
    let slots = slots
        .into_iter()
        .map(|alternatives| {
            let mut slot = prefix.clone();
            slot.push(alternatives);
            slot
        })
        .collect();
    finish(words, slots, rule)
}

/// Common titles that stand before a name (`Старейшина Гу`, `мастер Линь Дун`), with
/// their own gender: the title declines as a noun, the name as a name.
const TITLES: &[(&str, Gender)] = &[
    ("старейшина", Gender::Masculine),
    ("мастер", Gender::Masculine),
    ("господин", Gender::Masculine),
    ("брат", Gender::Masculine),
    ("учитель", Gender::Masculine),
    ("наставник", Gender::Masculine),
    ("глава", Gender::Masculine),
    ("патриарх", Gender::Masculine),
    ("владыка", Gender::Masculine),
    ("князь", Gender::Masculine),
    ("принц", Gender::Masculine),
    ("генерал", Gender::Masculine),
    ("император", Gender::Masculine),
    ("дядя", Gender::Masculine),
    ("монах", Gender::Masculine),
    ("хозяин", Gender::Masculine),
    ("госпожа", Gender::Feminine),
    ("сестра", Gender::Feminine),
    ("принцесса", Gender::Feminine),
    ("императрица", Gender::Feminine),
    ("наставница", Gender::Feminine),
    ("тётя", Gender::Feminine),
    ("тетя", Gender::Feminine),
];

/// A title's or name's slots with the accusative slot of an animate noun (the
/// genitive) where the masculine declension leaves it out.
fn animate(mut slots: Slots) -> Slots {
    if slots.len() == 4 {
        slots.insert(2, slots[0].clone());
    }
    slots
}

/// A title from [`TITLES`] followed by a capitalised name, or `None`.
fn title_name(words: &[&str], parsed: &[Word], gender: Option<Gender>) -> Option<Forms> {
    if words.len() < 2 || !words[1..].iter().all(|w| w.chars().next().is_some_and(char::is_uppercase)) {
        return None;
    }
    let title_gender = TITLES.iter().find(|(title, _)| *title == parsed[0].lower)?.1;
    let (title_slots, _) = noun(&parsed[0], Some(title_gender))?;
    let last = words[words.len() - 1];
    let name_slots = match name_slots(&parsed[parsed.len() - 1], gender) {
        Ok((slots, _)) => animate(slots),
        Err(_) => vec![vec![last.to_owned()]; 5],
    };
    let middle: Vec<Vec<String>> = words[1..words.len() - 1].iter().map(|w| vec![(*w).to_owned()]).collect();
    let slots = animate(title_slots)
        .into_iter()
        .zip(name_slots)
        .map(|(title, name)| {
            let mut slot = vec![title];
            slot.extend(middle.iter().cloned());
            slot.push(name);
            slot
        })
        .collect();
    Some(finish(words, slots, NAME_TITLE))
}

fn phrase(words: &[&str], parsed: &[Word], gender: Option<Gender>) -> Forms {
    // Leading adjectives, then the head noun; they must all agree with the head.
    let mut head = 0;
    while head + 1 < parsed.len() && adjective_gender(&parsed[head]).is_some() {
        head += 1;
    }
    let adjective_gender_of_phrase = if head > 0 { adjective_gender(&parsed[0]) } else { None };
    let agrees = (0..head).all(|i| adjective_gender(&parsed[i]) == adjective_gender_of_phrase)
        && adjective_gender_of_phrase.is_none_or(|g| noun_can_be(&parsed[head], g));
    if !agrees {
        head = 0;
    }
    let phrase_gender = if head > 0 { adjective_gender_of_phrase } else { gender };
    let Some((noun_slots, rule)) = noun(&parsed[head], phrase_gender) else { return none(UNKNOWN_PATTERN) };
    // A masculine or neuter phrase has no accusative slot (it is the nominative or
    // the genitive); a first-declension or feminine soft noun has one.
    let has_accusative = noun_slots.len() == 5;
    let adjective_slots: Vec<Slots> = (0..head)
        .map(|i| {
            let g = adjective_gender_of_phrase.unwrap_or(Gender::Masculine);
            let mut slots = adjective_forms(&parsed[i], g);
            if !has_accusative && slots.len() == 5 {
                slots.remove(2);
            } else if has_accusative && slots.len() == 4 {
                // A masculine noun in -а with a masculine adjective: the adjective's
                // accusative is its genitive or nominative; the genitive is used.
                slots.insert(2, slots[0].clone());
            }
            slots
        })
        .collect();
    let slots = (0..noun_slots.len())
        .map(|slot| {
            let mut line: Vec<Vec<String>> = adjective_slots.iter().map(|a| a[slot].clone()).collect();
            line.push(noun_slots[slot].clone());
            line.extend(words[head + 1..].iter().map(|w| vec![(*w).to_owned()]));
            line
        })
        .collect();
    finish(words, slots, rule)
}
