//! Command-line arguments (clap). Only this module knows argv.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

/// lorebank: the event-sourced memory of a book-translation pipeline.
///
/// Exit codes: 0 ok, 1 storage failure, 2 invalid input (nothing written),
/// 3 corruption, 4 replay mismatch, 5 conflict with another writer.
#[derive(Debug, Parser)]
#[command(name = "lorebank", version, max_term_width = 100)]
pub struct Args {
    /// The book file (one book, one `.lorebank` file).
    #[arg(long, global = true, env = "LOREBANK_BOOK", value_name = "PATH")]
    pub book: Option<PathBuf>,
    /// Send the command to a running `lorebank serve` at URL instead of opening the
    /// file; --book then names a book of its library (docs/http.md).
    #[arg(long, global = true, env = "LOREBANK_SERVER", value_name = "URL")]
    pub server: Option<String>,
    /// Print machine-readable JSON (stable; see docs/cli.md).
    #[arg(long, global = true)]
    pub json: bool,
    /// Read as this party (`kind:name`, one the book declares): show, assemble,
    /// replay and export then give only what is released to it (docs/governance.md).
    /// Without it, the book's full view.
    #[arg(long, global = true, env = "LOREBANK_PARTY", value_name = "PARTY")]
    pub party: Option<String>,
    /// How long to wait for the book while other lorebank processes have it open
    /// (seconds, fractions allowed; 0 waits not at all).
    #[arg(long, global = true, env = "LOREBANK_WAIT", value_name = "SECONDS", default_value = "60", value_parser = wait_seconds)]
    pub wait: Duration,
    #[command(subcommand)]
    pub command: Command,
}

/// `--wait`: a number of seconds, at least 0.
fn wait_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?} is not a number of seconds from 0 up"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new book with its normalization profile (the first event).
    Init {
        /// Which fold table to build from OpenCC and Unicode data.
        #[arg(long, default_value = "zh", value_parser = profile_names())]
        profile: String,
        /// The language of the source text, a BCP 47 tag in canonical case (`en`,
        /// `zh-Hant`); default: the profile's (`zh`, `ja`, `und` for plain).
        #[arg(long, value_name = "TAG")]
        source_lang: Option<String>,
        /// The language of the renderings, a BCP 47 tag in canonical case (`es`,
        /// `pt-BR`); default: `ru`.
        #[arg(long, value_name = "TAG")]
        target_lang: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Append events from a JSON Lines file (one event body per line) as one atomic batch.
    Apply {
        /// The file, or `-` for standard input.
        file: PathBuf,
        /// Let a term put replace an existing term entirely without warning about the
        /// fields it drops.
        #[arg(long)]
        replace: bool,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Import a glossary file of another tool (GalTransl, SakuraLLM, LinguaGacha,
    /// AiNiee, SillyTavern, NovelAI, OmegaT, TBX) as one atomic batch, and report
    /// what was imported, updated, unchanged, skipped, shared between entries and
    /// lost (docs/formats.md).
    Import(ImportArgs),
    /// Write the glossary a translator of a chapter sees at a revision in another
    /// tool's format (the spoiler gate applies).
    Export(ExportArgs),
    /// Check a translation of a recorded chunk against its receipt: is every
    /// injected term rendered (in a declared or a generated case form), as often as
    /// in the source, with verbs that agree with its gender. Only reports; stores the
    /// check beside the receipt (docs/postcheck.md).
    Check(CheckArgs),
    /// The review queue: open candidates and flagged records, and the verdicts on them.
    #[command(subcommand)]
    Review(ReviewCommand),
    /// Ask a chat model for the proper names of chapters and propose those the book
    /// does not know as candidates for review (docs/model.md).
    Extract(Box<ExtractArgs>),
    /// Put the open conflicts of chapters (two senses hit in one chunk, a shared
    /// rendering, a disputed gender) to a chat model, and file each verdict as a
    /// `verify` for a reviewer (docs/model.md).
    Adjudicate(Box<AdjudicateArgs>),
    /// Show a chat model's stored exchange: what a job asked and what the model
    /// answered (by the exchange's id, or the request's hash; docs/model.md).
    Exchange {
        /// The 64 hex digits `extract`, `adjudicate` or `eval` report (`exchange`, or
        /// `request` for its latest answer).
        id: String,
    },
    /// Translate chapters with a chat model without terminology, with the book's
    /// context and with a random glossary, post-check every translation, and report
    /// whether the glossary helps (docs/evaluation.md).
    Eval(Box<EvalArgs>),
    /// Look for names in a chunk that no record covers, and propose each as a
    /// candidate for review (docs/names.md); with --chapters, over every chunk of
    /// those chapters at once, ranked.
    Scan {
        /// Chapter of the chunk; chapters start at 1.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..), required_unless_present = "chapters")]
        chapter: Option<u32>,
        /// Read the registered source text of these chapters (`1-30`) at once and
        /// propose the names the book-wide ranking scores at least --min-score.
        #[arg(long, value_name = "N|A-B", value_parser = chapter_range, conflicts_with_all = ["chapter", "chunk", "text"])]
        chapters: Option<(u32, u32)>,
        /// With --chapters: the least score proposed (default 16, the ranking's
        /// cut-off for a likely name; 0 proposes every ranked surface).
        #[arg(long)]
        min_score: Option<u32>,
        /// Key of the chunk within the chapter (needed with --text; without it,
        /// `source`).
        #[arg(long)]
        chunk: Option<String>,
        /// The chunk text: a file, or `-` for standard input. Left out, the whole of
        /// the chapter's source text (`source add`) is scanned.
        #[arg(long)]
        text: Option<PathBuf>,
        /// List what would be proposed; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Glossary terms.
    #[command(subcommand)]
    Term(TermCommand),
    /// Aliases of terms.
    #[command(subcommand)]
    Alias(AliasCommand),
    /// Summaries.
    #[command(subcommand)]
    Summary(SummaryCommand),
    /// Print events.
    Log {
        /// First seq to print.
        #[arg(long, value_name = "R", default_value_t = 1)]
        from: u64,
        /// Last seq to print (default: the head).
        #[arg(long, value_name = "R")]
        to: Option<u64>,
    },
    /// Walk the whole hash chain; exit 3 naming the first bad event.
    Verify,
    /// The active glossary at a revision and chapter.
    Show {
        /// Revision (default: the head).
        #[arg(long, value_name = "R")]
        as_of: Option<u64>,
        /// Only records active at this chapter (the spoiler gate); chapters start at 1.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        chapter: Option<u32>,
    },
    /// The snapshot ID at a revision.
    Snapshot {
        /// Revision (default: the head).
        #[arg(long, value_name = "R")]
        as_of: Option<u64>,
    },
    /// Records added, removed and changed field by field between two revisions.
    Diff {
        /// The earlier revision.
        from: u64,
        /// The later revision.
        to: u64,
    },
    /// Append compensating events so the head's snapshot equals revision R's.
    Rollback {
        /// The revision to return to.
        #[arg(long, value_name = "R")]
        to: u64,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Drop derived caches, refold the whole log and print the head's snapshot ID.
    Rebuild,
    /// Assemble the context of a chunk against the head, print it and record a receipt.
    Assemble {
        /// Chapter of the chunk; chapters start at 1.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chapter: u32,
        /// Key of the chunk within the chapter (e.g. `2` or `p3-5`).
        #[arg(long)]
        chunk: String,
        /// The chunk text: a file, or `-` for standard input (the default).
        #[arg(long, default_value = "-")]
        text: PathBuf,
        /// The previous receipt of the same chapter (scene inertia); id or prefix.
        #[arg(long, value_name = "RECEIPT")]
        prev: Option<String>,
        /// Do not record a receipt.
        #[arg(long)]
        dry_run: bool,
    },
    /// Re-assemble a receipt's input and prove byte equality with the recorded output
    /// (exit 4 if it differs); or, with --snapshot, assemble against a past snapshot.
    Replay {
        /// Receipt id or unique prefix.
        #[arg(required_unless_present = "snapshot")]
        receipt: Option<String>,
        /// A snapshot ID to assemble against instead.
        #[arg(long, requires_all = ["chapter", "text"])]
        snapshot: Option<String>,
        /// Chapter (with --snapshot); chapters start at 1.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chapter: Option<u32>,
        /// Chunk text file or `-` (with --snapshot).
        #[arg(long)]
        text: Option<PathBuf>,
    },
    /// Explain every recorded chunk of a chapter: what was injected, from which event,
    /// what was rejected and why, and what has changed since.
    Audit {
        /// The chapter; chapters start at 1.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chapter: u32,
    },
    /// Recorded chunks whose context would differ under the head snapshot: the list
    /// to re-translate. With `--with`, what a batch would re-open before it is
    /// written.
    Impact {
        /// Compare with the snapshot at revision R instead of each recorded output.
        #[arg(long, value_name = "R", conflicts_with = "with")]
        since: Option<u64>,
        /// Only chunks where this term's line would be added, removed or changed.
        #[arg(long, value_name = "ID", conflicts_with = "with")]
        term: Option<String>,
        /// What-if: decide this events file (as `apply` reads it; `-` for stdin)
        /// against the head without writing it, and list the chunks whose context it
        /// would change, with the lines each would lose and gain.
        #[arg(long, value_name = "FILE")]
        with: Option<PathBuf>,
        /// With `--with`: who the batch is decided as, `kind:name` (default: you).
        #[arg(long, env = "LOREBANK_ACTOR")]
        actor: Option<String>,
    },
    /// The register of expected concepts (a cast list the book must cover).
    #[command(subcommand)]
    Expect(ExpectCommand),
    /// Names by the standard (Palladius for Chinese, Polivanov for Japanese kana).
    #[command(subcommand)]
    Names(NamesCommand),
    /// The book's source text, a chapter at a time (docs/cli.md#source).
    #[command(subcommand)]
    Source(SourceCommand),
    /// Expected concepts no record covers, and recorded chunks where an expected
    /// surface got nothing injected.
    Coverage {
        /// Only the recorded chunks of this chapter; chapters start at 1.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chapter: Option<u32>,
    },
    /// The additive memory profile (docs/governance.md).
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Serve the HTTP/JSON API over a directory of books (docs/http.md). Stops
    /// cleanly on SIGTERM or SIGINT.
    Serve(Box<ServeArgs>),
    /// Print the OpenAPI document of the HTTP API (docs/openapi.json).
    Openapi,
    /// Back the book up to OUT while writers keep appending: a copy of one consistent
    /// moment, verified before it is moved to OUT (docs/operations.md).
    Backup {
        /// The backup file to write.
        out: PathBuf,
        /// Replace OUT if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Install a verified copy of BACKUP at --book (any path); the backup is checked
    /// whole (chain, blobs, documents) before anything is installed.
    Restore {
        /// The backup file (written by `lorebank backup`).
        backup: PathBuf,
        /// Replace an existing book (while holding its writer turn).
        #[arg(long)]
        force: bool,
    },
    /// Write the book as a portable archive: the event stream with its chain, the
    /// blobs and the documents, independent of the storage layout (docs/archive.md).
    ExportArchive {
        /// The archive file to write.
        out: PathBuf,
        /// Replace OUT if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Create the new book --book from an archive, after checking every chain link
    /// and checksum; a damaged archive creates nothing.
    ImportArchive {
        /// The archive file (written by `lorebank export-archive`).
        archive: PathBuf,
    },
    /// The embedding tier: the book's model and its terms' vectors (docs/embeddings.md).
    #[command(subcommand)]
    Embed(EmbedCommand),
    /// Propose the name-like spans of a chunk that no term matches but whose vector is
    /// near a term, as low-trust candidates: possible new aliases (docs/embeddings.md).
    Suggest(SuggestArgs),
    /// Propose pairs of terms whose vectors say they are probably one entity, as
    /// low-trust candidates for a reviewer's verdict (docs/embeddings.md).
    Dedupe(DedupeArgs),
}

/// `lorebank serve`.
#[derive(Debug, ClapArgs)]
pub struct ServeArgs {
    /// The directory of books: book NAME is the file NAME.lorebank there.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The address to listen on. Anything but loopback needs --token-file.
    #[arg(long, default_value = "127.0.0.1:7373", value_name = "IP:PORT")]
    pub listen: String,
    /// A file of bearer tokens, one per line, each optionally followed by a space and
    /// the party it reads as (`TOKEN tool:pipeline`); every request must carry one.
    /// A token without a party has the book's full view.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Books open at once; one more closes the least recently used idle one.
    #[arg(long, default_value = "64", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_open_books: u64,
    /// The open books' memory, in bytes, by their own estimate; past it the least
    /// recently used idle ones close (no limit when not given).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_open_bytes: Option<u64>,
    /// Join a library replicated through NATS JetStream: the NATS servers,
    /// comma-separated (`nats://10.0.0.1:4222,nats://10.0.0.2:4222`). DIR then holds
    /// this node's copies of the library's books (docs/scale.md).
    #[arg(long, value_name = "URLS")]
    pub cluster: Option<String>,
    /// The library to join with --cluster: the JetStream stream `lorebank-NAME`.
    #[arg(long, default_value = "main", value_name = "NAME", requires = "cluster")]
    pub library: String,
    /// Replicas of the library's stream, when this node is the first and creates it.
    #[arg(long, default_value = "3", value_parser = clap::value_parser!(u64).range(1..=5), requires = "cluster")]
    pub replicas: u64,
    /// With --cluster: publish a book of its own found in DIR into the library when it
    /// is first opened, if the library has no book of that name (otherwise such a
    /// file is refused).
    #[arg(long, requires = "cluster")]
    pub seed: bool,
    /// Close a book unused for this many seconds.
    #[arg(long, default_value = "300", value_name = "SECONDS", value_parser = wait_seconds)]
    pub idle_close: Duration,
    /// Cut a request off after this many seconds (reading its headers and its body included).
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = wait_seconds)]
    pub request_timeout: Duration,
    /// The largest request body, in bytes.
    #[arg(long, default_value = "16777216", value_parser = clap::value_parser!(u64).range(1..=1_073_741_824))]
    pub body_limit: u64,
    /// The most events in one append.
    #[arg(long, default_value = "100000", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub events_max: u64,
    /// The most chunks in one chapter request.
    #[arg(long, default_value = "1000", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub chunks_max: u64,
    /// The most events in one page of the log.
    #[arg(long, default_value = "10000", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub log_page_max: u64,
    /// The ONNX embedding model the embedding routes use (each book checks it is its
    /// own model); without it they answer 503.
    #[arg(long, value_name = "FILE")]
    pub embed_model: Option<PathBuf>,
    /// The model's tokenizer.json (none for a model that tokenizes in its graph).
    #[arg(long, value_name = "FILE", requires = "embed_model")]
    pub embed_tokenizer: Option<PathBuf>,
    /// A custom-operator library the model's graph needs (repeatable, in order), e.g.
    /// the onnxruntime-extensions library `scripts/setup.sh --real-model` installs.
    #[arg(long, value_name = "FILE", requires = "embed_model")]
    pub embed_operator_library: Vec<PathBuf>,
    /// Serve the translation proxy (docs/proxy.md): forward OpenAI-compatible chat
    /// requests of `/proxy/BOOK/v1/chat/completions` to this base URL
    /// (`http://127.0.0.1:8080/v1`, `https://api.deepseek.com/v1`) with the book's
    /// context injected.
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// A PEM file of CA certificates an https upstream may chain to, besides the
    /// system's (a self-hosted upstream behind a private CA).
    #[arg(long, value_name = "FILE", requires = "upstream")]
    pub upstream_ca: Option<PathBuf>,
    /// The environment variable that holds the upstream's API key.
    #[arg(long, value_name = "NAME", requires = "upstream", conflicts_with = "upstream_key_file")]
    pub upstream_key_env: Option<String>,
    /// The file that holds the upstream's API key.
    #[arg(long, value_name = "FILE", requires = "upstream")]
    pub upstream_key_file: Option<PathBuf>,
    /// How long to wait for the upstream's answer to begin, and between two pieces of it.
    #[arg(long, default_value = "120", value_name = "SECONDS", value_parser = wait_seconds, requires = "upstream")]
    pub upstream_timeout: Duration,
    /// Forward a request in which no chunk of the book is found without context
    /// (saying so in `Lorebank-Injected: none`) instead of refusing it.
    #[arg(long, requires = "upstream")]
    pub proxy_forward_unplaced: bool,
    /// Post-check proxied translations with `propose`: a `verify` verdict for each
    /// failing term, for a reviewer.
    #[arg(long, requires = "upstream")]
    pub proxy_propose: bool,
}

/// `lorebank import`.
#[derive(Debug, ClapArgs)]
pub struct ImportArgs {
    /// The glossary file, or `-` for standard input (then --format is needed).
    pub file: PathBuf,
    /// The format (default: detected from the file name and content): galtransl,
    /// sakura, sakura-text, linguagacha, linguagacha-xlsx, ainiee, ainiee-xlsx,
    /// sillytavern, novelai, omegat, omegat-csv, tbx, tbx-2008 (tbx and tbx-2008
    /// both read TBX 2008 and TBX v3).
    #[arg(long, value_parser = format_name)]
    pub format: Option<formats::Format>,
    /// Refuse the import (exit 2, nothing written) if any entry would be skipped,
    /// any key shared between entries or any field lost.
    #[arg(long)]
    pub strict: bool,
    /// Report what the import would do; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Who imports, `kind:name` (default: `import:<tool>`, e.g. `import:galtransl`).
    #[arg(long)]
    pub actor: Option<String>,
    /// Append only if the head is still N; otherwise exit 5 and write nothing.
    #[arg(long, value_name = "N")]
    pub expect_head: Option<u64>,
    /// Language of the source text in this file, for formats with language
    /// sections (TBX): a BCP 47 tag; default: the book's.
    #[arg(long, value_name = "TAG")]
    pub source_lang: Option<String>,
    /// Language of the renderings in this file, for formats with language sections
    /// (TBX): a BCP 47 tag; default: the book's.
    #[arg(long, value_name = "TAG")]
    pub target_lang: Option<String>,
}

/// `--format` of `export`: a format name, `profile` or `tmx`.
fn export_format_name(text: &str) -> Result<book::ExportForm, String> {
    match book::ExportForm::from_name(text) {
        Some(form) => Ok(form),
        None => format_name(text).map(book::ExportForm::Tool).map_err(|error| format!("{error}, profile or tmx")),
    }
}

/// `lorebank export`.
#[derive(Debug, ClapArgs)]
pub struct ExportArgs {
    /// The format: galtransl, sakura, sakura-text, linguagacha, linguagacha-xlsx,
    /// ainiee, ainiee-xlsx, sillytavern, novelai, omegat, omegat-csv, tbx (TBX-Basic
    /// 2019), tbx-2008 (TBX-Basic 2008, for translate-toolkit, Weblate and OmegaT); or
    /// profile, the profile's one line per record (docs/governance.md); or tmx, a
    /// translation memory (TMX 1.4b) of each recorded chunk's source text and its
    /// latest checked translation (docs/formats.md).
    #[arg(long, value_parser = export_format_name)]
    pub format: book::ExportForm,
    /// Only what a translator of this chapter may see (the spoiler gate); chapters
    /// start at 1. Without it, every active record. With tmx: only the chunks of
    /// this chapter.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub chapter: Option<u32>,
    /// Revision (default: the head); not with tmx.
    #[arg(long, value_name = "R")]
    pub as_of: Option<u64>,
    /// Write the file here (replaced whole, never left half-written) instead of to
    /// standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Language of the renderings, for formats with language sections (TBX), and
    /// of the translations (TMX): a BCP 47 tag; default: the book's.
    #[arg(long, value_name = "TAG")]
    pub target_lang: Option<String>,
}

/// A chat model (any OpenAI-compatible endpoint), for the jobs that ask one
/// (docs/model.md).
#[derive(Debug, ClapArgs)]
pub struct ModelArgs {
    /// The endpoint's OpenAI base URL (`http://127.0.0.1:8080/v1`,
    /// `https://api.deepseek.com/v1`). Left out, only the answers the book stored
    /// are used.
    #[arg(long, value_name = "URL", env = "LOREBANK_MODEL_URL")]
    pub model_url: Option<String>,
    /// The model's name, sent as `model` (and what stored answers are found by).
    #[arg(long, value_name = "NAME", env = "LOREBANK_MODEL")]
    pub model: String,
    /// The environment variable that holds the endpoint's API key.
    #[arg(long, value_name = "NAME", requires = "model_url", conflicts_with = "model_key_file")]
    pub model_key_env: Option<String>,
    /// The file that holds the endpoint's API key.
    #[arg(long, value_name = "FILE", requires = "model_url")]
    pub model_key_file: Option<PathBuf>,
    /// A PEM file of CA certificates an https endpoint may chain to, besides the
    /// system's.
    #[arg(long, value_name = "FILE", requires = "model_url")]
    pub model_ca: Option<PathBuf>,
    /// How long to wait for each answer to begin, and between two pieces of it.
    #[arg(long, default_value = "300", value_name = "SECONDS", value_parser = wait_seconds)]
    pub model_timeout: Duration,
}

/// `lorebank extract`.
#[derive(Debug, ClapArgs)]
pub struct ExtractArgs {
    /// The chapter, or a range of them (`3`, `1-5`); each needs its source text
    /// (`source add`) unless --text gives the one chapter's.
    #[arg(long, value_name = "N|A-B", value_parser = chapter_range)]
    pub chapter: (u32, u32),
    /// The chapter's text: a file, or `-` for standard input (one chapter only).
    #[arg(long)]
    pub text: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Ask the model again, even for a part whose answer the book stored.
    #[arg(long)]
    pub fresh: bool,
    /// Report what would be proposed; write nothing (no candidates, no answers).
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// `lorebank adjudicate`.
#[derive(Debug, ClapArgs)]
pub struct AdjudicateArgs {
    /// The chapter, or a range of them (`3`, `1-5`); left out, every chapter with a
    /// recorded receipt.
    #[arg(long, value_name = "N|A-B", value_parser = chapter_range)]
    pub chapter: Option<(u32, u32)>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Ask the model again, even for a chapter whose answer the book stored.
    #[arg(long)]
    pub fresh: bool,
    /// Report the verdicts; write nothing (no dispositions, no answers).
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// `lorebank eval`.
#[derive(Debug, ClapArgs)]
pub struct EvalArgs {
    /// The chapters (`3`, `1-5`), each with its source text (`source add`).
    #[arg(long, value_name = "N|A-B", value_parser = chapter_range)]
    pub chapters: (u32, u32),
    /// The arms to run: none (no terminology), glossary (the book's context), random
    /// (a random glossary of the same shape).
    #[arg(long, value_delimiter = ',', default_value = "none,glossary,random", value_parser = ["none", "glossary", "random"])]
    pub modes: Vec<String>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// The random arm's seed.
    #[arg(long, default_value = "1")]
    pub seed: u64,
    /// The largest chunk, in characters (whole lines).
    #[arg(long, default_value = "1500", value_parser = clap::value_parser!(u64).range(100..=20_000))]
    pub chunk_chars: u64,
    /// Ask the model again, even for a request whose answer the book stored.
    #[arg(long)]
    pub fresh: bool,
    /// An acceptance criterion, `ARM.METRIC>=X` or `ARM.METRIC<=X` (repeatable):
    /// unmet, the command exits 2 after the report. Metrics: adherence, missing, wrong,
    /// consistency (rates from 0 to 1), gender_flags, omissions, flags, tokens.
    #[arg(long, value_name = "CRITERION", value_parser = |text: &str| book::eval::Requirement::parse(text))]
    pub require: Vec<book::eval::Requirement>,
    /// Also write the report to this directory: report.md, report.json and an SVG
    /// chart per metric.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Who asks (stored with each exchange).
    #[arg(long, env = "LOREBANK_ACTOR")]
    pub actor: Option<String>,
}

/// `N` or `A-B`, chapters from 1, `A <= B`.
pub fn chapter_range(text: &str) -> Result<(u32, u32), String> {
    let number = |part: &str| -> Result<u32, String> {
        match part.trim().parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("{text:?}: expected a chapter N or a range A-B of chapters from 1")),
        }
    };
    let (from, to) = match text.split_once('-') {
        Some((from, to)) => (number(from)?, number(to)?),
        None => (number(text)?, number(text)?),
    };
    if from > to {
        return Err(format!("{text:?}: the range ends before it starts"));
    }
    Ok((from, to))
}

/// `lorebank check`.
#[derive(Debug, ClapArgs)]
pub struct CheckArgs {
    /// The receipt of the chunk (id or a prefix of at least 8 hex digits).
    #[arg(long)]
    pub receipt: String,
    /// The translation of the chunk: a file, or `-` for standard input.
    #[arg(long)]
    pub translation: PathBuf,
    /// Write a `verify` verdict (reason `postcheck_missing` or
    /// `postcheck_wrong_rendering`) on each record the check finds missing or wrongly
    /// rendered, for a reviewer.
    #[arg(long)]
    pub propose: bool,
    /// Do not store the check beside the receipt.
    #[arg(long)]
    pub dry_run: bool,
    /// Who checks, `kind:name`: the actor the stored check is filed with, and who
    /// proposes (with --propose).
    #[arg(long, env = "LOREBANK_ACTOR")]
    pub actor: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Open candidates (most sighted first) and flagged records, with whom to ask.
    List {
        /// Only the records this party owns (own or by the book's default).
        #[arg(long, value_name = "PARTY")]
        owner: Option<String>,
    },
    /// One candidate or record with its evidence.
    Show {
        /// `C-…` or `T-…`.
        id: String,
    },
    /// Accept a candidate as a new term (one batch: the term and the verdict), or a
    /// flagged record.
    Accept {
        /// `C-…` or `T-…`.
        id: String,
        /// The rendering (a candidate without a suggested one needs it).
        #[arg(long)]
        dst: Option<String>,
        /// Grammatical gender of the rendering.
        #[arg(long, value_enum)]
        gender: Option<GenderArg>,
        /// Category (`character`, `place`, …).
        #[arg(long)]
        kind: Option<String>,
        /// Free note for translators.
        #[arg(long)]
        note: Option<String>,
        /// The id of the new term (default: the next free one).
        #[arg(long = "as", value_name = "T-N")]
        term: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Reject a candidate or a record (it leaves the queue; a rejected record is no
    /// longer injected).
    Reject {
        /// `C-…` or `T-…`.
        id: String,
        /// Reason code, lowercase snake_case (`not_a_name`, `spoiler`).
        #[arg(long, default_value = book::review::REJECTED)]
        reason: String,
        /// Free note.
        #[arg(long)]
        note: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Mark a record (or candidate) for verification: injected marked unverified,
    /// its output checked.
    Verify {
        /// `C-…` or `T-…`.
        id: String,
        /// Reason code, lowercase snake_case.
        #[arg(long, default_value = book::review::VERIFY)]
        reason: String,
        /// Free note.
        #[arg(long)]
        note: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
}

#[derive(Debug, Subcommand)]
pub enum SourceCommand {
    /// Set chapter N's text to FILE (UTF-8; a byte order mark is dropped, line ends
    /// are kept byte for byte); the same text and title again write nothing.
    Add {
        /// The text file, or `-` for standard input.
        file: PathBuf,
        /// The chapter; chapters start at 1.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chapter: u32,
        /// The chapter's title (none when left out).
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Set the text of a chapter per file of DIR (its regular files, not its
    /// subfolders), each numbered by the first run of ASCII digits in its name's stem
    /// (`001.txt`, `ch12-title.md`, `第3章.txt`), all in one batch or none.
    Import {
        /// The folder.
        dir: PathBuf,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// The chapters that have text: chapter, title, bytes, characters, text id.
    List,
    /// Chapter N's text, byte for byte (with --json, and what the list says of it).
    Show {
        /// The chapter.
        #[arg(value_parser = clap::value_parser!(u32).range(1..))]
        chapter: u32,
    },
}

#[derive(Debug, Subcommand)]
pub enum NamesCommand {
    /// Every character and place term whose rendering differs from the standard
    /// transcription of its source, with the standard's form and the first syllable
    /// that differs; terms accepted with the reason `name_exception` are listed apart.
    Lint,
}

#[derive(Debug, Subcommand)]
pub enum ExpectCommand {
    /// Register the concepts of a cast list (one surface per line, optionally a tab
    /// and a kind; `#` comments) or, with --format, of another tool's glossary file,
    /// as one atomic batch.
    Import {
        /// The file, or `-` for standard input.
        file: PathBuf,
        /// Read the file as this glossary format (each entry's source surface).
        #[arg(long, value_parser = format_name)]
        format: Option<formats::Format>,
        /// Report what would be registered; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Register one concept.
    Add {
        /// Its source surface.
        surface: String,
        /// Its kind (`character`).
        #[arg(long)]
        kind: Option<String>,
        /// Free note (where the expectation comes from).
        #[arg(long)]
        note: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Take a concept out of the register.
    Drop {
        /// Its surface, as registered.
        surface: String,
        #[command(flatten)]
        write: WriteOpts,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// The level of the profile the book reaches (1, 2 or 3) and the records that
    /// fail each requirement; exit 2 below the level --require asks for.
    Check {
        /// The level the book must reach (a gate for a build); default 1.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=3))]
        require: u8,
    },
}

/// `--format`: a format name.
fn format_name(text: &str) -> Result<formats::Format, String> {
    formats::Format::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = formats::Format::ALL.iter().map(|format| format.name()).collect();
        format!("unknown format {text:?}; one of {}", names.join(", "))
    })
}

/// `init --profile`: the book's profiles ([`book::service::PROFILES`]).
fn profile_names() -> clap::builder::PossibleValuesParser {
    let names =
        book::service::PROFILES.iter().map(|profile| clap::builder::PossibleValue::new(profile.name).help(profile.doc));
    clap::builder::PossibleValuesParser::new(names)
}

/// Options shared by every command that appends.
#[derive(Debug, ClapArgs)]
pub struct WriteOpts {
    /// Who makes the change, `kind:name` (`human:anna`, `llm:extractor`, `import:galtransl`).
    #[arg(long, env = "LOREBANK_ACTOR")]
    pub actor: Option<String>,
    /// Provenance: a chapter and paragraph, a file, a review ticket.
    #[arg(long)]
    pub source: Option<String>,
    /// Append only if the head is still N; otherwise exit 5 and write nothing.
    #[arg(long, value_name = "N")]
    pub expect_head: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum TermCommand {
    /// Put the full content of a term (new, or a new version of an existing one).
    Put(Box<TermPutArgs>),
    /// Change some fields of a term; the others keep their current values.
    Edit(Box<TermEditArgs>),
    /// A term's history: every version with its provenance.
    Show {
        /// The term id.
        id: String,
        /// Revision (default: the head).
        #[arg(long, value_name = "R")]
        as_of: Option<u64>,
    },
    /// Retire a term.
    Retire {
        /// The term id.
        id: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
}

#[derive(Debug, ClapArgs)]
pub struct TermPutArgs {
    /// Stable id, `T-<number>`.
    #[arg(long)]
    pub id: String,
    /// Source surface as written in the original.
    #[arg(long)]
    pub src: String,
    /// Target rendering.
    #[arg(long)]
    pub dst: String,
    /// Disambiguator when one surface has several meanings.
    #[arg(long)]
    pub sense: Option<String>,
    /// Category tag: character, place, technique, …
    #[arg(long)]
    pub kind: Option<String>,
    /// Grammatical gender of the rendering.
    #[arg(long, value_enum)]
    pub gender: Option<GenderArg>,
    /// Declension forms, comma-separated: "Сяо Яня,Сяо Яню".
    #[arg(long, value_delimiter = ',')]
    pub decl: Vec<String>,
    /// How the character speaks.
    #[arg(long)]
    pub speech: Option<String>,
    /// First chapter of the window.
    #[arg(long, default_value_t = 1)]
    pub since: u32,
    /// Last chapter of the window (default: open-ended).
    #[arg(long)]
    pub until: Option<u32>,
    /// Review status.
    #[arg(long, value_enum, default_value = "approved")]
    pub status: StatusArg,
    /// Free note for translators.
    #[arg(long)]
    pub note: Option<String>,
    /// Higher wins ties when the budget is tight.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub priority: i32,
    /// Inject into every chunk inside the window.
    #[arg(long)]
    pub constant: bool,
    /// Secondary keys, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub secondary: Vec<String>,
    /// How secondary keys combine.
    #[arg(long, value_enum, default_value = "and-any")]
    pub secondary_logic: LogicArg,
    /// Alias surfaces added in the same batch (repeatable).
    #[arg(long)]
    pub alias: Vec<String>,
    /// The record this one replaces from `--since` on.
    #[arg(long)]
    pub supersedes: Option<String>,
    /// The party that answers for the term (`human:names-editor`).
    #[arg(long, value_name = "PARTY")]
    pub owner: Option<String>,
    /// The role within the owner a question goes to.
    #[arg(long, value_name = "ROLE")]
    pub owner_role: Option<String>,
    /// The parties that may read the term, comma-separated (`*`: every party).
    #[arg(long, value_delimiter = ',', value_name = "PARTIES")]
    pub release_to: Option<Vec<String>>,
    /// The parties that may read the note, when fewer than the term's.
    #[arg(long, value_delimiter = ',', value_name = "PARTIES")]
    pub note_release_to: Option<Vec<String>>,
    /// Replace an existing term entirely without warning about the fields it drops.
    #[arg(long)]
    pub replace: bool,
    #[command(flatten)]
    pub write: WriteOpts,
}

#[derive(Debug, ClapArgs)]
pub struct TermEditArgs {
    /// The term id.
    pub id: String,
    /// New source surface.
    #[arg(long)]
    pub src: Option<String>,
    /// New rendering.
    #[arg(long)]
    pub dst: Option<String>,
    /// New sense.
    #[arg(long, conflicts_with = "clear_sense")]
    pub sense: Option<String>,
    /// Remove the sense.
    #[arg(long)]
    pub clear_sense: bool,
    /// New category tag.
    #[arg(long, conflicts_with = "clear_kind")]
    pub kind: Option<String>,
    /// Remove the category tag.
    #[arg(long)]
    pub clear_kind: bool,
    /// New grammatical gender.
    #[arg(long, value_enum, conflicts_with = "clear_gender")]
    pub gender: Option<GenderArg>,
    /// Remove the gender.
    #[arg(long)]
    pub clear_gender: bool,
    /// New declension forms, comma-separated.
    #[arg(long, value_delimiter = ',', conflicts_with = "clear_decl")]
    pub decl: Option<Vec<String>>,
    /// Remove every declension form.
    #[arg(long)]
    pub clear_decl: bool,
    /// New speech note.
    #[arg(long, conflicts_with = "clear_speech")]
    pub speech: Option<String>,
    /// Remove the speech note.
    #[arg(long)]
    pub clear_speech: bool,
    /// New first chapter of the window.
    #[arg(long)]
    pub since: Option<u32>,
    /// New last chapter of the window.
    #[arg(long, conflicts_with = "clear_until")]
    pub until: Option<u32>,
    /// Make the window open-ended.
    #[arg(long)]
    pub clear_until: bool,
    /// New review status.
    #[arg(long, value_enum)]
    pub status: Option<StatusArg>,
    /// New note for translators.
    #[arg(long, conflicts_with = "clear_note")]
    pub note: Option<String>,
    /// Remove the note.
    #[arg(long)]
    pub clear_note: bool,
    /// New priority.
    #[arg(long, allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Whether to inject into every chunk inside the window.
    #[arg(long, value_name = "true|false")]
    pub constant: Option<bool>,
    /// New secondary keys, comma-separated.
    #[arg(long, value_delimiter = ',', conflicts_with = "clear_secondary")]
    pub secondary: Option<Vec<String>>,
    /// How secondary keys combine.
    #[arg(long, value_enum)]
    pub secondary_logic: Option<LogicArg>,
    /// Remove the secondary keys.
    #[arg(long)]
    pub clear_secondary: bool,
    /// New superseded record.
    #[arg(long, conflicts_with = "clear_supersedes")]
    pub supersedes: Option<String>,
    /// Supersede nothing.
    #[arg(long)]
    pub clear_supersedes: bool,
    /// New owner.
    #[arg(long, value_name = "PARTY", conflicts_with = "clear_owner")]
    pub owner: Option<String>,
    /// Remove the owner (the book's default applies).
    #[arg(long)]
    pub clear_owner: bool,
    /// New owner role.
    #[arg(long, value_name = "ROLE", conflicts_with = "clear_owner_role")]
    pub owner_role: Option<String>,
    /// Remove the owner role.
    #[arg(long)]
    pub clear_owner_role: bool,
    /// New release list, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "PARTIES", conflicts_with = "clear_release_to")]
    pub release_to: Option<Vec<String>>,
    /// Remove the release list (the book's default applies).
    #[arg(long)]
    pub clear_release_to: bool,
    /// New release list of the note, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "PARTIES", conflicts_with = "clear_note_release_to")]
    pub note_release_to: Option<Vec<String>>,
    /// Remove the note's release list (it is read by whoever reads the term).
    #[arg(long)]
    pub clear_note_release_to: bool,
    #[command(flatten)]
    pub write: WriteOpts,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GenderArg {
    M,
    F,
    N,
    Pl,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StatusArg {
    Approved,
    Auto,
    Draft,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogicArg {
    AndAny,
    AndAll,
    NotAny,
    NotAll,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AliasKindArg {
    Variant,
    Nickname,
    Title,
    Reading,
}

#[derive(Debug, Subcommand)]
pub enum AliasCommand {
    /// Add a surface that finds a term.
    Add {
        /// The term id.
        id: String,
        /// The alias surface.
        surface: String,
        /// What kind of alias.
        #[arg(long, value_enum, default_value = "variant")]
        kind: AliasKindArg,
        /// First chapter the alias applies to (default: the term's window).
        #[arg(long)]
        since: Option<u32>,
        /// Last chapter the alias applies to.
        #[arg(long)]
        until: Option<u32>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Remove an alias.
    Remove {
        /// The term id.
        id: String,
        /// The alias surface.
        surface: String,
        #[command(flatten)]
        write: WriteOpts,
    },
}

#[derive(Debug, Subcommand)]
pub enum SummaryCommand {
    /// Put the full content of a summary.
    Put {
        /// Stable id, `S-<number>`.
        #[arg(long)]
        id: String,
        /// `chapter:N`, `arc:A-B` or `book`.
        #[arg(long)]
        scope: String,
        /// The summary text.
        #[arg(long)]
        text: String,
        /// First chapter at which it may be shown.
        #[arg(long)]
        visible_from: Option<u32>,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Retire a summary.
    Retire {
        /// The summary id.
        id: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        write: WriteOpts,
    },
}

/// The files of an embedding model on this machine.
#[derive(Debug, ClapArgs)]
pub struct ModelFilesArgs {
    /// The ONNX model file.
    #[arg(long = "model", env = "LOREBANK_EMBED_MODEL", value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Its tokenizer.json (none for a model that tokenizes in its graph).
    #[arg(long = "tokenizer", env = "LOREBANK_EMBED_TOKENIZER", value_name = "FILE")]
    pub tokenizer: Option<PathBuf>,
    /// A custom-operator library its graph needs (repeatable, in order; in the
    /// variable, paths separated by `:`), e.g. the onnxruntime-extensions library
    /// `scripts/setup.sh --real-model` installs.
    #[arg(
        long = "operator-library",
        env = "LOREBANK_EMBED_OPERATOR_LIBRARY",
        value_name = "FILE",
        value_delimiter = ':'
    )]
    pub operator_libraries: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum EmbedCommand {
    /// Record the identity of a model (the blake3 of its files, its dimension,
    /// pooling, normalization) as the book's embedding model; vectors of another
    /// model go stale.
    SetModel(Box<SetModelArgs>),
    /// Embed every term whose current texts have no vectors under the book's model,
    /// and drop stale vectors (a progress bar on a terminal).
    Refresh {
        #[command(flatten)]
        files: ModelFilesArgs,
        /// Recompute every term's vectors, fresh or not.
        #[arg(long)]
        all: bool,
    },
    /// The book's model and how many terms have fresh, missing and stale vectors.
    Status,
}

/// `lorebank embed set-model`.
#[derive(Debug, ClapArgs)]
pub struct SetModelArgs {
    #[command(flatten)]
    pub files: ModelFilesArgs,
    /// The name to record (`multilingual-e5-small`).
    #[arg(long)]
    pub name: String,
    /// How token vectors become one vector per text.
    #[arg(long, value_enum, default_value = "mean")]
    pub pooling: PoolingArg,
    /// Keep vectors as the model gives them instead of scaling them to unit length.
    #[arg(long)]
    pub no_normalize: bool,
    /// The graph output to read (default: the first).
    #[arg(long, value_name = "NAME")]
    pub output: Option<String>,
    /// The vector dimension, for a graph whose output does not declare it.
    #[arg(long)]
    pub dim: Option<u32>,
    /// The lowest cosine of a suggestion, 0 to 1.
    #[arg(long, default_value = "0.80", value_parser = score_arg, value_name = "COSINE")]
    pub suggest_min_score: i32,
    /// The lowest cosine of a dedupe pair, 0 to 1.
    #[arg(long, default_value = "0.92", value_parser = score_arg, value_name = "COSINE")]
    pub dedupe_min_score: i32,
    #[command(flatten)]
    pub write: WriteOpts,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PoolingArg {
    /// The mean of the token vectors.
    Mean,
    /// The first token's vector.
    Cls,
    /// The graph pools itself.
    InGraph,
}

/// A cosine given as a decimal (`0.85`), in millionths.
pub fn score_arg(text: &str) -> Result<i32, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("{text:?} is not a number"))?;
    if !(-1.0..=1.0).contains(&value) {
        return Err(format!("{text} is outside -1..=1"));
    }
    Ok((value * 1_000_000.0).round() as i32)
}

/// `lorebank suggest`.
#[derive(Debug, ClapArgs)]
pub struct SuggestArgs {
    /// Chapter of the chunk; chapters start at 1.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub chapter: u32,
    /// The chunk text: a file, or `-` for standard input (the default).
    #[arg(long, default_value = "-")]
    pub text: PathBuf,
    /// Key of the chunk within the chapter, as evidence names it (default: the text
    /// file's name without its extension, `stdin` for standard input).
    #[arg(long)]
    pub chunk: Option<String>,
    /// List what would be proposed; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The lowest cosine proposed (default: the book's, set with the model).
    #[arg(long, value_parser = score_arg, value_name = "COSINE", allow_negative_numbers = true)]
    pub min_score: Option<i32>,
    /// Also compare every phrase of 3 to 6 characters with the terms the chunk does not
    /// name: descriptive mentions (one embedding per distinct phrase, about 2.3 per character).
    #[arg(long)]
    pub phrases: bool,
    #[command(flatten)]
    pub files: ModelFilesArgs,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// `lorebank dedupe`.
#[derive(Debug, ClapArgs)]
pub struct DedupeArgs {
    /// List the pairs; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The lowest cosine proposed (default: the book's, set with the model).
    #[arg(long, value_parser = score_arg, value_name = "COSINE", allow_negative_numbers = true)]
    pub min_score: Option<i32>,
    #[command(flatten)]
    pub files: ModelFilesArgs,
    #[command(flatten)]
    pub write: WriteOpts,
}
