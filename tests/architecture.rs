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
    ("interchange", &["ledger-model"]),
    ("postcheck", &["ledger-model"]),
    ("names", &["ledger-model", "matcher"]),
    ("replay", &["ledger", "projections", "ledger-model", "matcher", "assembly", "interchange", "postcheck", "names"]),
    // The use cases that need a book and a model: the only crate with both in reach.
    ("suggest", &["replay", "embed", "ledger-model", "projections", "names"]),
    ("cluster", &["ledger", "ledger-model", "replay"]),
    (
        "lorebank",
        &[
            "ledger-model",
            "ledger",
            "projections",
            "matcher",
            "replay",
            "assembly",
            "interchange",
            "embed",
            "suggest",
            "cluster",
        ],
    ),
];

/// Crates that must not appear anywhere in a crate's normal dependency closure.
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("matcher", &["ledger-model", "redb", "ort", "tokio", "axum", "reqwest", "serde_json", "async-nats"]),
    ("ledger-model", &["redb", "matcher", "ort", "tokio", "axum", "reqwest", "async-nats"]),
    (
        "projections",
        &["redb", "ort", "tokenizers", "tokio", "axum", "reqwest", "embed", "suggest", "ledger", "async-nats"],
    ),
    // The ledger knows a commit gate, never the log behind it.
    ("ledger", &["matcher", "projections", "embed", "replay", "ort", "tokio", "async-nats", "cluster"]),
    ("embed", &["ledger", "projections", "matcher", "replay", "cluster", "async-nats"]),
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
        "interchange",
        &[
            "redb",
            "ledger",
            "projections",
            "matcher",
            "replay",
            "embed",
            "ort",
            "tokio",
            "axum",
            "reqwest",
            "async-nats",
        ],
    ),
    (
        "postcheck",
        &["redb", "ledger", "projections", "replay", "embed", "ort", "tokio", "axum", "reqwest", "async-nats"],
    ),
    ("replay", &["embed", "ort", "tokenizers", "tokio", "axum", "reqwest", "suggest", "async-nats", "cluster"]),
    ("suggest", &["tokio", "axum", "reqwest", "async-nats", "cluster"]),
    // Replication is transport and protocol: no HTTP, no model, no embedding.
    ("cluster", &["axum", "embed", "ort", "tokenizers", "reqwest", "suggest"]),
    ("names", &["redb", "ledger", "projections", "replay", "embed", "ort", "tokio", "axum", "reqwest", "async-nats"]),
];

struct Graph {
    names: BTreeMap<String, String>,
    deps: BTreeMap<String, Vec<String>>,
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
    let workspace = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| names[id.as_str().unwrap()].clone())
        .collect();
    let mut deps = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let normal: Vec<String> = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|dep| dep["dep_kinds"].as_array().unwrap().iter().any(|kind| kind["kind"].is_null()))
            .map(|dep| names[dep["pkg"].as_str().unwrap()].clone())
            .collect();
        deps.insert(names[node["id"].as_str().unwrap()].clone(), normal);
    }
    Graph { names, deps, workspace }
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
