//! Properties of the check on any text: it never panics, its spans are on char
//! boundaries inside the text, and it is a pure function of its inputs.

use ledger_model::Gender;
use postcheck::{check, decline, Check, Rendering};
use proptest::prelude::*;

/// Text mixing the letters the rules look at with whitespace, punctuation, digits,
/// letters that fold to several characters (İ) and CJK.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            proptest::sample::select(vec![
                "Сяо",
                "Янь",
                "Яня",
                "яне",
                "сказала",
                "сказал",
                "не",
                "тихо",
                "Ночной",
                "секты",
                "ё",
                "Ё",
                "İ",
                "ß",
                "Яньцзин",
                "Мэй",
                "Лин",
                "огня",
                "хранителя",
                "—",
                ",",
                ".",
                " ",
                "\n",
                "\t",
                "  ",
                "1",
                "炎",
                "\u{301}",
            ])
            .prop_map(str::to_owned),
            any::<char>().prop_map(String::from),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn gender() -> impl Strategy<Value = Option<Gender>> {
    proptest::option::of(proptest::sample::select(vec![
        Gender::Masculine,
        Gender::Feminine,
        Gender::Neuter,
        Gender::Plural,
    ]))
}

fn rendering() -> impl Strategy<Value = Rendering> {
    (
        0u32..4,
        prop_oneof![
            proptest::sample::select(vec!["Сяо Янь", "Янь", "Мэй Лин", "Ночная секта", "хранитель огня", "İ", " "])
                .prop_map(str::to_owned),
            text(),
        ],
        proptest::collection::vec(text(), 0..3),
        gender(),
        proptest::option::of(proptest::sample::select(vec!["character", "place", "title"]).prop_map(str::to_owned)),
        0u32..4,
        any::<bool>(),
    )
        .prop_map(|(term, dst, decl, gender, kind, source_count, review)| Rendering {
            term,
            dst,
            decl,
            gender,
            kind,
            source_count,
            review,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn check_never_panics_and_spans_are_char_boundaries_inside_the_text(
        translation in text(),
        renderings in proptest::collection::vec(rendering(), 0..5),
    ) {
        let result = check(&translation, &renderings);
        prop_assert_eq!(result.items.len(), renderings.len());
        let mut spans = Vec::new();
        for item in &result.items {
            prop_assert_eq!(item.found_count as usize, item.found.len());
            spans.extend(item.found.iter().map(|f| f.bytes));
            spans.extend(item.wrong.iter().map(|w| w.bytes));
            spans.extend(item.agreement.iter().map(|a| a.bytes));
        }
        for (start, end) in spans {
            let (start, end) = (start as usize, end as usize);
            prop_assert!(start < end && end <= translation.len(), "{}..{} in {:?}", start, end, translation);
            prop_assert!(translation.is_char_boundary(start) && translation.is_char_boundary(end));
        }
        // Occurrences of one rendering do not overlap and come in text order.
        for item in &result.items {
            for pair in item.found.windows(2) {
                prop_assert!(pair[0].bytes.1 <= pair[1].bytes.0);
            }
        }
    }

    #[test]
    fn the_check_is_a_pure_function_of_its_inputs(
        translation in text(),
        renderings in proptest::collection::vec(rendering(), 0..5),
    ) {
        let first = check(&translation, &renderings);
        let again = check(&translation.clone(), &renderings.clone());
        prop_assert_eq!(&first, &again);
        let bytes = first.to_bytes();
        prop_assert_eq!(&bytes, &again.to_bytes());
        prop_assert_eq!(Check::from_bytes(&bytes), Ok(first));
    }

    #[test]
    fn decline_never_panics_and_never_returns_the_base(dst in text(), gender in gender()) {
        let forms = decline(&dst, gender, None);
        prop_assert!(postcheck::RULES.contains(&forms.rule));
        for form in &forms.forms {
            prop_assert_ne!(form.to_lowercase(), dst.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Damaged bytes are refused or read back as a check that encodes to exactly
    /// those bytes: `from_bytes` never panics and never accepts a second spelling.
    #[test]
    fn damaged_bytes_are_refused_or_canonical(
        translation in text(),
        renderings in proptest::collection::vec(rendering(), 0..3),
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<proptest::sample::Index>(),
    ) {
        let mut bytes = check(&translation, &renderings).to_bytes();
        for (at, value) in flips {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        if let Ok(read) = Check::from_bytes(&bytes) {
            prop_assert_eq!(read.to_bytes(), bytes.clone());
        }
        let end = cut.index(bytes.len() + 1);
        if let Ok(read) = Check::from_bytes(&bytes[..end]) {
            prop_assert_eq!(read.to_bytes(), bytes[..end].to_vec());
        }
    }
}
