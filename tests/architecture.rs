//! Guards the crate graph: reads `cargo metadata` and fails on a workspace edge the
//! design does not allow, or on a forbidden crate (storage engine, ONNX runtime,
//! async runtime, JSON) anywhere in the dependency closure of a pure crate.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Workspace crates each crate may depend on directly (normal dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("matcher", &[]),
    ("ledger-model", &[]),
    ("projections", &["ledger-model", "matcher"]),
    ("ledger", &["ledger-model"]),
    ("embed", &[]),
    ("assembly", &["projections", "ledger-model"]),
    ("formats", &["ledger-model"]),
    ("postcheck", &["ledger-model"]),
    ("names", &["ledger-model", "matcher"]),
    // Finding the registered chunk in a tool's request: the fold, nothing else.
    ("locate", &["matcher"]),
    // Names by the standard (Palladius, Polivanov): tables and rules, no other crate.
    ("translit", &[]),
    (
        "book",
        &[
            "ledger",
            "projections",
            "ledger-model",
            "matcher",
            "assembly",
            "formats",
            "postcheck",
            "names",
            "locate",
            "translit",
        ],
    ),
    // The use cases that need a book and a model: the only crate with both in reach.
    ("suggest", &["book", "embed", "ledger-model", "projections", "names"]),
    ("cluster", &["ledger", "ledger-model", "book"]),
    // The one OpenAI-compatible client (the proxy's upstream, the batch jobs' model):
    // it knows no book.
    ("chat", &[]),
    (
        "lorebank",
        &[
            "ledger-model",
            "ledger",
            "projections",
            "matcher",
            "book",
            "assembly",
            "formats",
            "embed",
            "suggest",
            "cluster",
            "chat",
        ],
    ),
    // Dev-only: the helpers the tests of several crates share. Every crate may list it
    // under [dev-dependencies]; none may depend on it (DEV_ONLY).
    ("test-support", &["ledger-model", "ledger", "projections", "matcher", "book", "formats"]),
];

/// Crates that are only ever dev-dependencies: no crate, itself included, has one in
/// its normal dependency closure.
const DEV_ONLY: &[&str] = &["test-support"];

/// The tiers of the workspace, lowest first, each with the folders its crates live in.
/// A crate depends only on crates of its own tier or a lower one, and where a crate
/// sits on disk says its tier: a newcomer reads the rule from the folder tree.
const TIERS: &[(&str, &[&str])] = &[
    // Pure: bytes and values in, bytes and values out; no storage, no clock, no model.
    (
        "pure",
        &[
            "ledger/model",
            "matcher",
            "matcher/names",
            "matcher/locate",
            "matcher/translit",
            "projections",
            "replay/assembly",
            "replay/postcheck",
            "formats",
        ],
    ),
    // Storage and runtime: the redb ledger, the ONNX model.
    ("storage and runtime", &["ledger", "embed"]),
    // The book service: every use case, one call each (and what extends it: the model's
    // use cases, the library's replicated origin, the client of a chat model, which the
    // book's model jobs are handed by the adapters).
    ("service", &["book", "book/suggest", "book/chat", "cluster"]),
    // Adapters: argv, HTTP, pages; they parse, call the service and render.
    ("adapters", &["."]),
    // Dev-only, above every tier: the helpers tests share may reach any crate, and no
    // crate may depend on them (a test's [dev-dependencies] may).
    ("dev-only", &["tests/support"]),
];

/// Crates that must not appear anywhere in a crate's normal dependency closure.
const FORBIDDEN: &[(&str, &[&str])] = &[
    // The client reaches an endpoint; the book, its storage and its models are not its.
    ("chat", &["ledger-model", "ledger", "projections", "book", "redb", "ort", "matcher", "serde_json"]),
    ("matcher", &["ledger-model", "redb", "ort", "tokio", "axum", "reqwest", "serde_json", "async-nats"]),
    ("ledger-model", &["redb", "matcher", "ort", "tokio", "axum", "reqwest", "async-nats"]),
    (
        "projections",
        &["redb", "ort", "tokenizers", "tokio", "axum", "reqwest", "embed", "suggest", "ledger", "async-nats"],
    ),
    // The ledger knows a commit gate, never the log behind it.
    ("ledger", &["matcher", "projections", "embed", "book", "ort", "tokio", "async-nats", "cluster"]),
    ("embed", &["ledger", "projections", "matcher", "book", "cluster", "async-nats"]),
    (
        "assembly",
        &[
            "redb",
            "ledger",
            "ort",
            "tokenizers",
            "tokio",
            "axum",
            "reqwest",
            "embed",
            "suggest",
            "serde_json",
            "async-nats",
        ],
    ),
    (
        "formats",
        &["redb", "ledger", "projections", "matcher", "book", "embed", "ort", "tokio", "axum", "reqwest", "async-nats"],
    ),
    ("postcheck", &["redb", "ledger", "projections", "book", "embed", "ort", "tokio", "axum", "reqwest", "async-nats"]),
    ("book", &["embed", "ort", "tokenizers", "tokio", "axum", "reqwest", "suggest", "async-nats", "cluster"]),
    ("suggest", &["tokio", "axum", "reqwest", "async-nats", "cluster"]),
    // Replication is transport and protocol: no HTTP, no model, no embedding.
    ("cluster", &["axum", "embed", "ort", "tokenizers", "reqwest", "suggest"]),
    ("names", &["redb", "ledger", "projections", "book", "embed", "ort", "tokio", "axum", "reqwest", "async-nats"]),
    ("locate", &["redb", "ledger", "projections", "book", "embed", "ort", "tokio", "axum", "reqwest", "async-nats"]),
    (
        "translit",
        &[
            "redb",
            "ledger",
            "projections",
            "book",
            "embed",
            "ort",
            "tokio",
            "axum",
            "reqwest",
            "async-nats",
            "serde_json",
        ],
    ),
];

struct Graph {
    names: BTreeMap<String, String>,
    /// Each workspace crate's folder, relative to the workspace root (`.` for the root).
    folders: BTreeMap<String, String>,
    deps: BTreeMap<String, Vec<String>>,
    /// Each crate's dev-dependencies (only), by name.
    dev_deps: BTreeMap<String, Vec<String>>,
    workspace: BTreeSet<String>,
}

fn graph() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--filter-platform", env!("LOREBANK_HOST_TARGET")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| (package["id"].as_str().unwrap().to_owned(), package["name"].as_str().unwrap().to_owned()))
        .collect::<BTreeMap<_, _>>();
    let workspace: BTreeSet<String> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| names[id.as_str().unwrap()].clone())
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let folders = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|package| workspace.contains(package["name"].as_str().unwrap()))
        .map(|package| {
            let manifest = std::path::Path::new(package["manifest_path"].as_str().unwrap());
            let folder = manifest.parent().unwrap().strip_prefix(root).unwrap().to_str().unwrap();
            let folder = if folder.is_empty() { "." } else { folder };
            (package["name"].as_str().unwrap().to_owned(), folder.to_owned())
        })
        .collect();
    let mut deps = BTreeMap::new();
    let mut dev_deps = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let of_kind = |kind: &str| -> Vec<String> {
            node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|dep| {
                    dep["dep_kinds"].as_array().unwrap().iter().any(|dep_kind| match dep_kind["kind"].as_str() {
                        None => kind == "normal",
                        Some(name) => name == kind,
                    })
                })
                .map(|dep| names[dep["pkg"].as_str().unwrap()].clone())
                .collect()
        };
        let name = names[node["id"].as_str().unwrap()].clone();
        deps.insert(name.clone(), of_kind("normal"));
        dev_deps.insert(name, of_kind("dev"));
    }
    Graph { names, folders, deps, dev_deps, workspace }
}

fn closure(graph: &Graph, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(name) = stack.pop() {
        for dep in graph.deps.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn workspace_edges_are_the_allowed_ones() {
    let graph = graph();
    assert!(graph.names.len() > graph.workspace.len());
    let listed: BTreeSet<String> = ALLOWED.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(listed, graph.workspace, "every workspace crate needs a row in ALLOWED");
    for (name, allowed) in ALLOWED {
        for dep in &graph.deps[*name] {
            if graph.workspace.contains(dep) {
                assert!(allowed.contains(&dep.as_str()), "{name} depends on {dep}, which the design does not allow");
            }
        }
    }
}

fn tier_of(folder: &str) -> usize {
    let tiers: Vec<usize> =
        TIERS.iter().enumerate().filter(|(_, (_, folders))| folders.contains(&folder)).map(|(tier, _)| tier).collect();
    assert_eq!(tiers.len(), 1, "the folder {folder} must be listed in exactly one tier of TIERS");
    tiers[0]
}

#[test]
fn the_folder_of_a_crate_says_its_tier_and_no_crate_depends_upward() {
    let graph = graph();
    let listed: BTreeSet<&str> = TIERS.iter().flat_map(|(_, folders)| folders.iter().copied()).collect();
    let found: BTreeSet<&str> = graph.folders.values().map(String::as_str).collect();
    assert_eq!(listed, found, "TIERS lists exactly the folders that hold a workspace crate");
    let mut edges = 0;
    for (name, folder) in &graph.folders {
        let tier = tier_of(folder);
        for dep in graph.deps[name].iter().filter(|dep| graph.workspace.contains(*dep)) {
            let dep_folder = &graph.folders[dep];
            let dep_tier = tier_of(dep_folder);
            assert!(
                dep_tier <= tier,
                "{name} ({folder}, {}) depends on {dep} ({dep_folder}, {}), a higher tier",
                TIERS[tier].0,
                TIERS[dep_tier].0
            );
            edges += usize::from(dep_tier < tier);
        }
    }
    // The service reaches storage and the adapters reach the service, so the check can fail.
    assert!(edges > 10, "only {edges} edges cross tiers");
    assert_eq!(tier_of(&graph.folders["book"]), 2);
    assert!(graph.deps["lorebank"].iter().any(|dep| dep == "book"));
    // A dev-only crate sits above every tier, so the rule above already keeps it out of
    // every crate's normal dependencies; say so by name, and through the closure.
    for dev_only in DEV_ONLY {
        assert_eq!(TIERS[tier_of(&graph.folders[*dev_only])].0, "dev-only");
        for name in &graph.workspace {
            assert!(
                !graph.deps[name].iter().any(|dep| dep == dev_only),
                "{name} depends on {dev_only}, which is dev-only: list it under [dev-dependencies]"
            );
            assert!(!closure(&graph, name).contains(*dev_only), "{dev_only} is in the dependency closure of {name}");
        }
        // Tests do use it, so the check can fail.
        assert!(graph.dev_deps.values().flatten().any(|dep| dep == dev_only), "no crate dev-depends on {dev_only}");
    }
}

#[test]
fn pure_crates_have_no_forbidden_crate_in_their_closure() {
    let graph = graph();
    for (name, forbidden) in FORBIDDEN {
        let reachable = closure(&graph, name);
        for bad in *forbidden {
            assert!(!reachable.contains(*bad), "{bad} is reachable from {name}");
        }
    }
    // The storage engine and the ONNX runtime are where they should be, so the check
    // above can fail.
    assert!(closure(&graph, "ledger").contains("redb"));
    assert!(closure(&graph, "embed").contains("ort") && closure(&graph, "embed").contains("tokenizers"));
    // The use cases that need both are the one place where a book and a model meet.
    assert!(closure(&graph, "suggest").contains("ort") && closure(&graph, "suggest").contains("redb"));
    assert!(closure(&graph, "cluster").contains("async-nats") && closure(&graph, "cluster").contains("tokio"));
}

#[test]
fn only_projections_knows_the_frozen_layout() {
    let graph = graph();
    for name in &graph.workspace {
        if name != "projections" {
            assert!(
                !graph.deps[name].iter().any(|dep| dep == "rkyv"),
                "{name} depends on rkyv; only projections::frozen knows the rkyv layout"
            );
        }
    }
    assert!(graph.deps["projections"].iter().any(|dep| dep == "rkyv"), "the check above can fail");
}

/// The application's top-level modules (`src/`), lowest first. A module uses only
/// modules before it in this list (`crate::X` paths), so there is no import circle
/// between them and a newcomer reads from the list where an adapter's code may
/// reach: the pages use the API's reads, the server composes both, the CLI starts
/// the server and renders what the service answers, and nothing below the CLI
/// knows argv.
const MODULES: &[(&str, &str)] = &[
    ("failure", "exit codes and the failure every adapter reports"),
    ("input", "bounded reads of files, standard input and NDJSON event lines"),
    ("render", "the JSON and text forms of the service's answers, and the stdout writer"),
    ("http", "the /v1 API: routes, auth, problems, the OpenAPI document"),
    ("ui", "the audit pages, on the API's reads"),
    ("serve", "the process that serves the API and the pages"),
    ("cli", "argv, one function per command, --server mode"),
];

/// The top-level module a file of `src/` belongs to (`None` for `main.rs`, the
/// root, which declares them all).
fn module_of(path: &std::path::Path, src: &std::path::Path) -> Option<String> {
    let relative = path.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_string_lossy().into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (name != "main").then_some(name)
}

/// Every `crate::NAME` a text names (in `use` lines, paths and doc links alike).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        // `$crate::` in a macro is the same path.
        let rest = &text[at + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

/// The uses that break [`MODULES`]'s order: (file, module, the module it names).
fn upward_uses(files: &[(std::path::PathBuf, String)], src: &std::path::Path) -> Vec<(String, String, String)> {
    let rank = |name: &str| MODULES.iter().position(|(module, _)| *module == name);
    let mut broken = Vec::new();
    for (path, text) in files {
        let Some(module) = module_of(path, src) else { continue };
        let Some(own) = rank(&module) else {
            broken.push((path.display().to_string(), module.clone(), "(not in MODULES)".to_owned()));
            continue;
        };
        for used in crate_paths(text) {
            match rank(&used) {
                Some(other) if other > own => broken.push((path.display().to_string(), module.clone(), used)),
                _ => {}
            }
        }
    }
    broken
}

fn rust_files(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path, text));
        }
    }
}

#[test]
fn the_modules_of_the_application_use_only_lower_ones() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|(path, _)| module_of(path, &src)).collect();
    let listed: BTreeSet<String> = MODULES.iter().map(|(module, _)| (*module).to_owned()).collect();
    assert_eq!(modules, listed, "MODULES lists exactly the top-level modules of src/");
    let broken = upward_uses(&files, &src);
    assert!(broken.is_empty(), "a module uses one above it in MODULES (file, module, used): {broken:#?}");
    // The adapters do reach down, so the check can fail: shown on a made-up file.
    let made_up = vec![(src.join("http/routes.rs"), "use crate::cli::args::Args;".to_owned())];
    assert_eq!(upward_uses(&made_up, &src), vec![(made_up[0].0.display().to_string(), "http".into(), "cli".into())]);
    let downward = files.iter().filter(|(path, _)| module_of(path, &src).as_deref() == Some("cli"));
    assert!(downward.flat_map(|(_, text)| crate_paths(text)).any(|used| used == "render"));
}
