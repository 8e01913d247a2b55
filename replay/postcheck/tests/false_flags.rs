//! The false-flag measurement: Russian sentences written for the project, each with
//! the renderings it contains, declined as a translator writes them. Every rendering
//! is in its sentence, so every item not found is a false flag. Run with
//! `cargo test -p postcheck --test false_flags -- --nocapture` to see the numbers
//! (docs/postcheck.md).

use ledger_model::Gender::{self, Feminine, Masculine, Neuter};
use postcheck::{check, check_base_only, Rendering, Verdict};

/// A glossary as an import leaves it: a base form, a gender, a kind, no decl forms.
const GLOSSARY: &[(u32, &str, Gender, &str)] = &[
    (1, "Сяо Янь", Masculine, "character"),
    (2, "Сюнь Эр", Feminine, "character"),
    (3, "Яо Лао", Masculine, "character"),
    (4, "Линь Дун", Masculine, "character"),
    (6, "Сакура", Feminine, "character"),
    (7, "Мэй Лин", Feminine, "character"),
    (8, "Ночная секта", Feminine, "faction"),
    (9, "хранитель огня", Masculine, "title"),
    (10, "Яньцзин", Masculine, "place"),
    (11, "Небесный дворец", Masculine, "place"),
    (12, "Тёмное пламя", Neuter, "technique"),
    (13, "пилюля основания", Feminine, "item"),
    (14, "Старейшина Гу", Masculine, "character"),
    (15, "Гора Облачного тумана", Feminine, "place"),
    (16, "Махиру", Feminine, "character"),
    (17, "Цзы Янь", Feminine, "character"),
    (18, "Мо Ли", Masculine, "character"),
    (19, "Снежный лотос", Masculine, "item"),
    (20, "Клан Сяо", Masculine, "faction"),
    (21, "Северный ветер", Masculine, "technique"),
    (22, "Мастер Яо", Masculine, "character"),
    (23, "Госпожа Мэй", Feminine, "character"),
    (24, "Лунный клинок", Masculine, "artifact"),
    (25, "Долина Тысячи Звёзд", Feminine, "place"),
    (26, "Юй Цзы", Masculine, "character"),
    (27, "Ледяной феникс", Masculine, "creature"),
    (28, "Кровавая луна", Feminine, "event"),
];

/// (sentence, the terms it renders).
const SENTENCES: &[(&str, &[u32])] = &[
    ("Старейшина долго смотрел на Сяо Яня.", &[1]),
    ("Сюнь Эр протянула Сяо Яню нефритовый флакон.", &[2, 1]),
    ("Яо Лао был доволен учеником.", &[3]),
    ("Сяо Янь поклонился Яо Лао.", &[1, 3]),
    ("Никто в Яньцзине не слышал о Линь Дуне.", &[10, 4]),
    ("Дорога в Яньцзин заняла три дня.", &[10]),
    ("Линь Дуна ждали у ворот.", &[4]),
    ("С Линь Дуном пришли двое слуг.", &[4]),
    ("Сакура улыбнулась и отвернулась.", &[6]),
    ("Он долго не мог забыть Сакуру.", &[6]),
    ("Письмо от Сакуры пришло утром.", &[6]),
    ("Мэй Лин подала знак Сяо Яню.", &[7, 1]),
    ("Ученики Ночной секты окружили площадь.", &[8]),
    ("Он с детства ненавидел Ночную секту.", &[8]),
    ("Между Ночной сектой и кланом Сяо давно шла вражда.", &[8, 20]),
    ("Хранитель огня поднял руку.", &[9]),
    ("Никто не смел перечить хранителю огня.", &[9]),
    ("Она поклонилась хранителю огня и вышла.", &[9]),
    ("Стены Небесного дворца сияли золотом.", &[11]),
    ("В Небесном дворце было тихо.", &[11]),
    ("Тёмное пламя вырвалось из его ладони.", &[12]),
    ("Он овладел темным пламенем за год.", &[12]),
    ("Жар тёмного пламени обжёг ему лицо.", &[12]),
    ("Для пилюли основания нужны три травы.", &[13]),
    ("Он проглотил пилюлю основания.", &[13]),
    ("Старейшина Гу нахмурился.", &[14]),
    ("Ученики старейшины Гу молчали.", &[14]),
    ("Туман окутал Гору Облачного тумана.", &[15]),
    ("На Горе Облачного тумана жили отшельники.", &[15]),
    ("Махиру принесла чай.", &[16]),
    ("Он дал Махиру зонт.", &[16]),
    ("Цзы Янь рассмеялась.", &[17]),
    ("Сяо Янь посмотрел на Цзы Янь.", &[1, 17]),
    ("Мо Ли стоял у окна.", &[18]),
    ("Снежный лотос цвёл раз в сто лет.", &[19]),
    ("За снежным лотосом охотились многие.", &[19]),
    ("Лепестки снежного лотоса светились.", &[19]),
    ("Глава клана Сяо созвал совет.", &[20]),
    ("Клан Сяо не простит обиды.", &[20]),
    ("Сюнь Эр смотрела на Сяо Яня и Яо Лао.", &[2, 1, 3]),
    ("Линь Дун рассказал о Яньцзине.", &[4, 10]),
    ("Голос Сяо Яня дрогнул.", &[1]),
    // Written after rule set 1 had its title rule, with entries the sentences above
    // do not use.
    ("Он призвал Северный ветер.", &[21]),
    ("Сила Северного ветра росла.", &[21]),
    ("Все ждали Мастера Яо у ворот.", &[22]),
    ("Слуги боялись госпожи Мэй.", &[23]),
    ("Он говорил с госпожой Мэй до рассвета.", &[23]),
    ("Он ударил Лунным клинком.", &[24]),
    ("В Долине Тысячи Звёзд стояла тишина.", &[25]),
    ("Сюнь Эр поклонилась Юй Цзы.", &[2, 26]),
    ("Крик Ледяного феникса разнёсся над горами.", &[27]),
    ("Перед Кровавой луной все затаились.", &[28]),
];

fn renderings(terms: &[u32]) -> Vec<Rendering> {
    terms
        .iter()
        .map(|term| {
            let (_, dst, gender, kind) = GLOSSARY.iter().find(|row| row.0 == *term).unwrap();
            Rendering {
                term: *term,
                dst: (*dst).to_owned(),
                decl: Vec::new(),
                gender: Some(*gender),
                kind: Some((*kind).to_owned()),
                source_count: 1,
                review: false,
            }
        })
        .collect()
}

#[test]
fn generated_forms_cut_the_false_flags_of_base_only_matching() {
    let (mut items, mut checks) = (0, 0);
    let (mut base_flags, mut base_flagged_checks) = (0, 0);
    let (mut flags, mut flagged_checks, mut missing, mut unverifiable) = (0, 0, 0, 0);
    let mut left = Vec::new();
    for (sentence, terms) in SENTENCES {
        let renderings = renderings(terms);
        let base = check_base_only(sentence, &renderings);
        let full = check(sentence, &renderings);
        checks += 1;
        items += renderings.len();
        let base_here = base.items.iter().filter(|i| i.found_count == 0).count();
        let here = full.items.iter().filter(|i| i.verdict != Verdict::Rendered).count();
        base_flags += base_here;
        base_flagged_checks += usize::from(base_here > 0);
        flags += here;
        flagged_checks += usize::from(here > 0);
        for item in full.items.iter().filter(|i| i.verdict != Verdict::Rendered) {
            missing += usize::from(item.verdict == Verdict::Missing);
            unverifiable += usize::from(item.verdict == Verdict::Unverifiable);
            left.push(format!("{sentence} term {} {:?} ({})", item.term, item.verdict, item.generated.rule));
        }
        // Every item the base form finds, the full check finds too.
        for (b, f) in base.items.iter().zip(&full.items) {
            assert!(f.found_count >= b.found_count, "{sentence}");
        }
    }
    println!("false flags over {checks} checks, {items} items (every rendering is present):");
    println!("  base-only: {base_flags} items flagged, {base_flagged_checks} of {checks} checks flagged");
    println!(
        "  generated: {flags} items flagged ({missing} missing, {unverifiable} unverifiable), \
         {flagged_checks} of {checks} checks flagged"
    );
    for line in &left {
        println!("  left: {line}");
    }
    // The one item left is a known limit of rule set 1: a fleeting vowel outside
    // -ец/-ок/-ень/-онь (`ветер` → `ветра`) needs a decl form.
    assert_eq!(left, ["Сила Северного ветра росла. term 21 Missing (noun_m)"]);
    assert_eq!((missing, unverifiable), (1, 0));
    assert!(base_flagged_checks > 2 * flagged_checks);
}
