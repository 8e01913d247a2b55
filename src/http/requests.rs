//! The requests of the API: the JSON bodies and the query strings the routes parse
//! (`routes`), which `lorebank --server` builds as struct literals (`cli::remote`), so
//! a field one side has cannot be left out by the other without the compiler
//! saying so. Their OpenAPI schemas are derived from them (`api`), the term edit's
//! from [`book::TERM_FIELDS`].

use std::borrow::Cow;

use ledger_model::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::openapi::{KnownFormat, RefOr};

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"profile": "plain", "source_lang": "en", "target_lang": "es", "actor": "human:editor"}))]
#[serde(deny_unknown_fields)]
pub struct CreateBook {
    /// The normalization profile: `zh`, `ja` or `plain`.
    pub profile: String,
    /// The language of the source text, a BCP 47 tag in canonical case (`en`,
    /// `zh-Hant`); default: the profile's (`zh`, `ja`, `und` for `plain`). Recorded as
    /// a `languages_set` in the first batch when given.
    #[serde(default)]
    pub source_lang: Option<String>,
    /// The language of the renderings, a BCP 47 tag in canonical case (`es`,
    /// `pt-BR`); default: `ru`.
    #[serde(default)]
    pub target_lang: Option<String>,
    /// Who creates the book, `kind:name` (default `system:init`).
    pub actor: Option<String>,
    /// Provenance (default `init`).
    pub source: Option<String>,
}

/// An append as a JSON object.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"events": [{"term_put": {"id": "T-11", "src": "旧塔", "dst": "Старая башня", "kind": "place", "gender": "f"}}], "actor": "human:editor", "source": "review-2"}))]
#[serde(deny_unknown_fields)]
pub struct AppendRequest {
    /// Event bodies, as in `lorebank apply` (docs/events.md).
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Value>,
    /// Who makes the change, `kind:name`.
    pub actor: Option<String>,
    /// Provenance for every event (default `append`).
    pub source: Option<String>,
    /// Append only if the head is still this; otherwise 409 and nothing is written.
    pub expected_head: Option<u64>,
    /// A term put replaces the whole term: `true` says that is meant, so no warning
    /// names the fields a put drops (default false).
    pub replace: Option<bool>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"to": 15, "reason": "keep the published names", "actor": "human:editor"}))]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// The revision to return to.
    pub to: u64,
    /// Why.
    pub reason: Option<String>,
    pub actor: Option<String>,
    pub source: Option<String>,
    pub expected_head: Option<u64>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"chapter": 1, "chunk": "2", "text": "下塔的时候，白衣先生已经在台阶下等他。", "prev": "70210ee8", "record": false}))]
#[serde(deny_unknown_fields)]
pub struct AssembleRequest {
    /// Chapter of the chunk; chapters start at 1.
    pub chapter: u32,
    /// Key of the chunk within the chapter.
    pub chunk: String,
    /// The chunk text.
    pub text: String,
    /// The previous receipt of the same chapter (id or prefix of at least 8 hex digits).
    pub prev: Option<String>,
    /// Record a receipt (default true); false assembles only (a dry run).
    pub record: Option<bool>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"key": "1", "text": "沈照十五岁，是灯宗年纪最小的弟子。"}))]
#[serde(deny_unknown_fields)]
pub struct ChunkRequest {
    /// Key of the chunk within the chapter.
    pub key: String,
    /// The chunk text.
    pub text: String,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"chunks": [{"key": "1", "text": "沈照十五岁，是灯宗年纪最小的弟子。"}, {"key": "2", "text": "先生名叫顾寒川。"}], "record": true}))]
#[serde(deny_unknown_fields)]
pub struct ChapterRequest {
    /// The chunks in order; each one's previous receipt is the one before it.
    pub chunks: Vec<ChunkRequest>,
    /// The receipt before the first chunk, if any.
    pub prev: Option<String>,
    /// Record the receipts (default true), all in one group commit.
    pub record: Option<bool>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"snapshot": "d78da758451855dc0fcc47231c1af5cdb8cba9c7b8a30d563fd240ce6f9332a0", "chapter": 1, "text": "沈照十五岁，是灯宗年纪最小的弟子。"}))]
#[serde(deny_unknown_fields)]
pub struct SnapshotAssembleRequest {
    /// The snapshot ID (64 hex digits) to assemble against.
    pub snapshot: String,
    /// Chapter; chapters start at 1.
    pub chapter: u32,
    /// The chunk text.
    pub text: String,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"translation": "Шэнь Чжао поднял фонарь.", "propose": false, "record": true}))]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The translation of the chunk.
    pub translation: String,
    /// Write a `verify` verdict on each record found missing or wrongly rendered.
    pub propose: Option<bool>,
    /// Store the check beside the receipt (default true).
    pub record: Option<bool>,
    /// Who checks (the stored check is filed with this actor) and proposes, `kind:name`.
    pub actor: Option<String>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"dst": "Старый даос", "gender": "m", "kind": "character", "actor": "human:editor"}))]
#[serde(deny_unknown_fields)]
pub struct AcceptRequest {
    /// The rendering (a candidate without a suggested one needs it).
    pub dst: Option<String>,
    /// Grammatical gender: `m`, `f`, `n` or `pl`.
    #[schema(value_type = Option<String>)]
    pub gender: Option<Gender>,
    /// Category.
    pub kind: Option<String>,
    /// Free note.
    pub note: Option<String>,
    /// The id of the new term (default: the next free one).
    pub term: Option<String>,
    /// Who accepts, `kind:name`.
    pub actor: Option<String>,
    /// Provenance.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"reason": "not_a_name", "actor": "human:editor"}))]
#[serde(deny_unknown_fields)]
pub struct JudgeRequest {
    /// Reason code, lowercase snake_case.
    pub reason: Option<String>,
    /// Free note.
    pub note: Option<String>,
    /// Who judges, `kind:name`.
    pub actor: Option<String>,
    /// Provenance.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"chunk": "1", "text": "空空道人笑道：“空空道人来也。”", "dry_run": true}))]
#[serde(deny_unknown_fields)]
pub struct ScanRequest {
    /// Key of the chunk within the chapter (needed with `text`; without it, `source`).
    pub chunk: Option<String>,
    /// The chunk text; left out, the whole of the chapter's source text
    /// (`PUT …/source/{chapter}`) is scanned.
    pub text: Option<String>,
    /// List what would be proposed; write nothing.
    pub dry_run: Option<bool>,
    /// Who proposes, `kind:name`.
    pub actor: Option<String>,
    /// Provenance (default `chCHAPTER/CHUNK`).
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

/// The query of a chapter's text (`PUT …/source/{chapter}`, `lorebank source add`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceQuery {
    /// The chapter's title (none when left out).
    pub title: Option<String>,
    /// Who sets it, `kind:name`.
    pub actor: Option<String>,
    /// Provenance (default `source add`).
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

/// One file of a source import: its name (which numbers its chapter) and its text.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    /// The file's name: its chapter is the first run of ASCII digits in its stem.
    pub name: String,
    /// The file's text (a leading byte order mark is dropped).
    pub text: String,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"files": [{"name": "001.txt", "text": "第一回 灵根育孕源流出\n"}, {"name": "第2章.txt", "text": "第二回\n"}], "actor": "human:editor"}))]
#[serde(deny_unknown_fields)]
pub struct SourceImportRequest {
    /// The files, a chapter each.
    pub files: Vec<SourceFile>,
    /// Who sets them, `kind:name`.
    pub actor: Option<String>,
    /// Provenance for every chapter (default: each file's name).
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"name": "lorebank-tiny-char-mean-32", "pooling": "mean", "normalize": true, "output": "last_hidden_state", "actor": "human:editor"}))]
#[serde(deny_unknown_fields)]
pub struct EmbeddingModelRequest {
    /// The name to record.
    pub name: String,
    /// `mean` (the default), `cls` or `in_graph`.
    #[schema(value_type = Option<String>)]
    pub pooling: Option<EmbeddingPooling>,
    /// Scale vectors to unit length (default true).
    pub normalize: Option<bool>,
    /// The graph output to read (default: the first).
    pub output: Option<String>,
    /// The vector dimension, for a graph whose output does not declare it.
    pub dim: Option<u32>,
    /// The lowest score of a suggestion, in millionths of a cosine (default 800000).
    pub suggest_min_score: Option<i32>,
    /// The lowest score of a dedupe pair, in millionths (default 920000).
    pub dedupe_min_score: Option<i32>,
    /// Who sets it, `kind:name`.
    pub actor: Option<String>,
    /// Provenance.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"all": false}))]
#[serde(deny_unknown_fields)]
pub struct RefreshRequest {
    /// Recompute every term's vectors, fresh or not.
    pub all: Option<bool>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"chunk": "1", "text": "“林月”来了。", "dry_run": true}))]
#[serde(deny_unknown_fields)]
pub struct SuggestRequest {
    /// Key of the chunk within the chapter.
    pub chunk: String,
    /// The chunk text.
    pub text: String,
    /// List what would be proposed; write nothing.
    pub dry_run: Option<bool>,
    /// The lowest score proposed, in millionths (default: the book's).
    pub min_score: Option<i32>,
    /// Also compare the chunk's phrases of 3 to 6 characters with the terms it does
    /// not name (descriptive mentions; one embedding per phrase). Default false.
    pub phrases: Option<bool>,
    /// Who proposes, `kind:name` (default `tool:embed`).
    pub actor: Option<String>,
    /// Provenance (default `chCHAPTER/CHUNK`).
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"dry_run": true}))]
#[serde(deny_unknown_fields)]
pub struct DedupeRequest {
    /// List the pairs; write nothing.
    pub dry_run: Option<bool>,
    /// The lowest score proposed, in millionths (default: the book's).
    pub min_score: Option<i32>,
    /// Who proposes, `kind:name` (default `tool:embed`).
    pub actor: Option<String>,
    /// Provenance (default `dedupe`).
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

/// Changes to some fields of a term ([`book::TermEdit`], whose fields
/// [`book::TERM_FIELDS`] lists) and who makes them: a field left out stays as it is;
/// `null` clears an optional one.
#[derive(Serialize, Deserialize)]
pub struct TermEditRequest {
    /// The fields to change.
    #[serde(flatten)]
    pub edit: book::TermEdit,
    /// Who makes the change, from where, against which head.
    #[serde(flatten)]
    pub write: WriteFields,
}

/// Who makes a write, from where, and against which head, as a body's members.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFields {
    /// Who makes the change, `kind:name`.
    pub actor: Option<String>,
    /// Provenance.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

impl TermEditRequest {
    /// Every member the body may have: the term's fields and the write's.
    pub fn members() -> Vec<&'static str> {
        let mut members = field_names::<book::TermEdit>().to_vec();
        members.extend_from_slice(field_names::<WriteFields>());
        members
    }
}

impl utoipa::PartialSchema for TermEditRequest {
    fn schema() -> RefOr<Schema> {
        let nullable = |kind: Type| SchemaType::from_iter([kind, Type::Null]);
        let mut object = ObjectBuilder::new()
            .description(Some(
                "Changes to some fields of a term: a field left out stays as it is; `null`\nclears an optional one.",
            ))
            .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
        // The form utoipa writes for the other requests' examples.
        #[allow(deprecated)]
        {
            object = object.example(Some(
                json!({"dst": "Секта Светильника", "status": "approved", "actor": "human:editor", "source": "review-2"}),
            ));
        }
        for field in book::TERM_FIELDS {
            let schema: Schema = match field.value {
                book::FieldValue::Texts => ArrayBuilder::new()
                    .schema_type(nullable(Type::Array))
                    .items(ObjectBuilder::new().schema_type(Type::String))
                    .description(Some(field.doc))
                    .into(),
                value => {
                    let builder = match value {
                        book::FieldValue::Chapter => ObjectBuilder::new()
                            .schema_type(nullable(Type::Integer))
                            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
                            .minimum(Some(0)),
                        book::FieldValue::Integer => ObjectBuilder::new()
                            .schema_type(nullable(Type::Integer))
                            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32))),
                        book::FieldValue::Flag => ObjectBuilder::new().schema_type(nullable(Type::Boolean)),
                        book::FieldValue::Keys => ObjectBuilder::new().schema_type(nullable(Type::Object)),
                        _ => ObjectBuilder::new().schema_type(nullable(Type::String)),
                    };
                    builder.description(Some(field.doc)).into()
                }
            };
            object = object.property(field.name, schema);
        }
        let write = object
            .property("actor", ObjectBuilder::new().schema_type(nullable(Type::String)))
            .property("source", ObjectBuilder::new().schema_type(nullable(Type::String)))
            .property(
                "expected_head",
                ObjectBuilder::new()
                    .schema_type(nullable(Type::Integer))
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                    .minimum(Some(0)),
            );
        RefOr::T(Schema::Object(write.build()))
    }
}

impl utoipa::ToSchema for TermEditRequest {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TermEditRequest")
    }
}

/// The names of the fields `T` deserializes (a struct's serde names), read from
/// what its `Deserialize` asks for.
pub fn field_names<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    struct Names(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("field names read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Stop {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Names {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut names = Names(None);
    let _ = T::deserialize(&mut names);
    names.0.unwrap_or(&[])
}

// ----- query strings -----

/// The query of an NDJSON append (`POST …/events`, `lorebank apply`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppendQuery {
    /// Who makes the change.
    pub actor: Option<String>,
    /// Provenance for every event.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
    /// A term put that drops fields of the term it replaces is meant.
    pub replace: Option<bool>,
    /// The name errors and default sources give the lines (default `body`).
    pub file: Option<String>,
}

/// The query of an import (`POST …/import`, `lorebank import`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportQuery {
    /// The format (default: detected).
    pub format: Option<String>,
    /// The file's name (default `upload`).
    pub file: Option<String>,
    /// Refuse any loss or shared key.
    pub strict: Option<bool>,
    /// Report; write nothing.
    pub dry_run: Option<bool>,
    /// Who imports (default `import:TOOL`).
    pub actor: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
    /// Language of the source text in this file (default: the book's).
    pub source_lang: Option<String>,
    /// Language of the renderings in this file (default: the book's).
    pub target_lang: Option<String>,
}

/// The query of a cast list's import (`POST …/expected`, `lorebank expect import`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectQuery {
    /// Read the file as this glossary format.
    pub format: Option<String>,
    /// The file's name (default `cast list`).
    pub file: Option<String>,
    /// Report; write nothing.
    pub dry_run: Option<bool>,
    /// Who registers (default `import:cast-list`).
    pub actor: Option<String>,
    /// Provenance for every concept.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expected_head: Option<u64>,
}

/// The query of an export (`GET …/export`, `lorebank export`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    /// A format's name, or `profile`.
    pub format: Option<String>,
    /// The spoiler gate.
    pub chapter: Option<u32>,
    /// Revision.
    pub as_of: Option<u64>,
    /// Language of the renderings (default: the book's).
    pub target_lang: Option<String>,
}

/// The query of a page of the log (`GET …/events`, `lorebank log`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogQuery {
    /// First seq.
    pub from: Option<u64>,
    /// Last seq.
    pub to: Option<u64>,
    /// Events in the page.
    pub limit: Option<u64>,
}

/// The query of the glossary (`GET …/glossary`, `lorebank show`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlossaryQuery {
    /// Only records active at this chapter.
    pub chapter: Option<u32>,
    /// Revision.
    pub as_of: Option<u64>,
}

/// The query of a read at a revision (`GET …/terms/{id}`, `GET …/snapshot`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsOfQuery {
    /// Revision.
    pub as_of: Option<u64>,
}

/// The query of a diff (`GET …/diff`, `lorebank diff`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffQuery {
    /// The earlier revision (required).
    pub from: Option<u64>,
    /// The later revision (default the head).
    pub to: Option<u64>,
}

/// The query of a chapter's read (`GET …/audit`, `GET …/coverage`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChapterQuery {
    /// The chapter.
    pub chapter: Option<u32>,
}

/// The query of an assembly (`POST …/assemble`, `POST …/chapters/{chapter}/assemble`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssembleQuery {
    /// `false` leaves the hit list out of the answer (for a pipeline that only wants
    /// the context); the receipt still records every hit.
    pub hits: Option<bool>,
}

/// The query of the impact (`GET …/impact`, `lorebank impact`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImpactQuery {
    /// Compare with the snapshot at this revision.
    pub since: Option<u64>,
    /// Only chunks where this term's line changes.
    pub term: Option<String>,
}

/// The query of the review queue (`GET …/review`, `lorebank review list`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewQuery {
    /// Only the records this party owns.
    pub owner: Option<String>,
}
