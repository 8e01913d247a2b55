//! Finding and loading the ONNX Runtime shared library.
//!
//! The library is loaded at run time (ort's `load-dynamic`), never linked, so a build
//! without it compiles and runs everything but embedding. Where it is looked for, in
//! order: an explicit [`RuntimeLocation::Path`], the `ORT_DYLIB_PATH` environment
//! variable, and the file `scripts/setup.sh` installs
//! ([`default_runtime_path`]). A file that is not there is
//! [`EmbedError::RuntimeMissing`], whose message says how to install it.
//!
//! ONNX Runtime allows one library and one environment per process: the first load
//! wins, and a later request for another file is [`EmbedError::RuntimeConflict`]
//! rather than a silent use of the first. Only `ort::init_from` is called, never
//! `ort::init`, which panics when the library is missing.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::EmbedError;

/// The ONNX Runtime version `scripts/setup.sh` installs (from the `onnxruntime` wheel
/// on PyPI) and the file name [`default_runtime_path`] ends in. ort 2.0.0-rc.15 with
/// the `api-31` feature needs 1.31 or newer.
pub const RUNTIME_VERSION: &str = "1.31.1";

/// How to install the library; part of [`EmbedError::RuntimeMissing`]'s message.
pub const RUNTIME_INSTALL_HINT: &str = "install it with ./scripts/setup.sh, which unzips \
onnxruntime/capi/libonnxruntime.so.1.31.1 from the onnxruntime==1.31.1 wheel on PyPI \
(pip download --no-deps onnxruntime==1.31.1) into ${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/onnxruntime/, \
or set ORT_DYLIB_PATH to a libonnxruntime.so of version 1.31 or newer";

/// Where to load the ONNX Runtime library from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RuntimeLocation {
    /// `ORT_DYLIB_PATH` if it is set and not empty, else [`default_runtime_path`].
    #[default]
    Discover,
    /// This file, whatever the environment says.
    Path(PathBuf),
}

/// Which rule chose the library file; part of the error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeSource {
    /// [`RuntimeLocation::Path`].
    Explicit,
    /// The `ORT_DYLIB_PATH` environment variable.
    EnvVar,
    /// [`default_runtime_path`], where `scripts/setup.sh` installs it.
    Default,
}

impl std::fmt::Display for RuntimeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RuntimeSource::Explicit => "the path given",
            RuntimeSource::EnvVar => "ORT_DYLIB_PATH",
            RuntimeSource::Default => "the default location of scripts/setup.sh",
        })
    }
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/onnxruntime/libonnxruntime.so.<RUNTIME_VERSION>`,
/// where `scripts/setup.sh` installs the library; `None` when neither variable is set.
pub fn default_runtime_path() -> Option<PathBuf> {
    let cache = match std::env::var_os("XDG_CACHE_HOME").filter(|value| !value.is_empty()) {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(std::env::var_os("HOME").filter(|value| !value.is_empty())?).join(".cache"),
    };
    Some(cache.join("lorebank").join("onnxruntime").join(format!("libonnxruntime.so.{RUNTIME_VERSION}")))
}

/// The loaded runtime: the library file, its version and the process's environment.
#[derive(Clone)]
pub(crate) struct Runtime {
    pub(crate) path: PathBuf,
    pub(crate) version: String,
    pub(crate) environment: ort::environment::Environment,
}

/// The runtime of this process, once loaded. A failed load leaves it empty, so a later
/// load (of a file that is there now) can still succeed.
static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// Resolves `location` to a file and the rule that chose it.
pub(crate) fn resolve(location: &RuntimeLocation) -> Result<(PathBuf, RuntimeSource), EmbedError> {
    match location {
        RuntimeLocation::Path(path) => Ok((path.clone(), RuntimeSource::Explicit)),
        RuntimeLocation::Discover => match std::env::var_os("ORT_DYLIB_PATH").filter(|value| !value.is_empty()) {
            Some(path) => Ok((PathBuf::from(path), RuntimeSource::EnvVar)),
            None => match default_runtime_path() {
                Some(path) => Ok((path, RuntimeSource::Default)),
                None => Err(EmbedError::RuntimeMissing {
                    path: PathBuf::from("$HOME/.cache/lorebank/onnxruntime"),
                    source_rule: RuntimeSource::Default,
                }),
            },
        },
    }
}

/// The runtime at `location`, loaded on first use.
pub(crate) fn load(location: &RuntimeLocation) -> Result<Runtime, EmbedError> {
    let (path, source_rule) = resolve(location)?;
    // Checked before ort sees the path: once a library is loaded, ort ignores the path
    // of a later `init_from`, so a missing file must be caught here to be caught at all.
    if !path.is_file() {
        return Err(EmbedError::RuntimeMissing { path, source_rule });
    }
    let path = std::fs::canonicalize(&path)
        .map_err(|error| EmbedError::RuntimeLoad { path: path.clone(), reason: error.to_string() })?;
    let mut slot = RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(runtime) = slot.as_ref() {
        if runtime.path == path {
            return Ok(runtime.clone());
        }
        return Err(EmbedError::RuntimeConflict { loaded: runtime.path.clone(), requested: path });
    }
    let builder = ort::init_from(&path)
        .map_err(|error| EmbedError::RuntimeLoad { path: path.clone(), reason: error.to_string() })?;
    let environment = builder
        .with_name("lorebank-embed")
        .with_telemetry(false)
        .build()
        .map_err(|error| EmbedError::RuntimeLoad { path: path.clone(), reason: error.to_string() })?;
    let version = version_from_build_info(ort::info())
        .or_else(|| version_from_file_name(&path))
        .unwrap_or_else(|| "unknown".to_owned());
    let runtime = Runtime { path, version, environment };
    *slot = Some(runtime.clone());
    Ok(runtime)
}

/// The version in ONNX Runtime's build info (`... git-branch=rel-1.31.1, ...`), which
/// release builds from a release branch carry. (The C API's `GetVersionString` has it
/// always, but ort 2.0.0-rc.15 does not expose it, and this workspace has no unsafe
/// code to call it.)
fn version_from_build_info(info: &str) -> Option<String> {
    let start = info.find("git-branch=rel-")? + "git-branch=rel-".len();
    dotted_version(&info[start..])
}

/// The version in a versioned library name (`libonnxruntime.so.1.31.1`,
/// `libonnxruntime.1.31.1.dylib`), which is what the PyPI wheel ships; its build info
/// names no branch.
fn version_from_file_name(path: &std::path::Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let start = name.find("onnxruntime")? + "onnxruntime".len();
    let rest = name[start..].trim_start_matches(".so").trim_start_matches('.');
    dotted_version(rest)
}

/// A leading `MAJOR.MINOR[.PATCH]` of digits.
fn dotted_version(text: &str) -> Option<String> {
    let version: String = text.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let version = version.trim_end_matches('.');
    let parts: Vec<&str> = version.split('.').collect();
    (parts.len() >= 2 && parts.iter().all(|part| !part.is_empty())).then(|| version.to_owned())
}

/// The library file of the runtime this process loaded, if any.
pub fn loaded_runtime_path() -> Option<PathBuf> {
    RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_ref().map(|runtime| runtime.path.clone())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{version_from_build_info, version_from_file_name};

    #[test]
    fn version_is_read_from_the_build_branch() {
        let info = "ORT Build Info: git-branch=rel-1.31.1, git-commit-id=abc, build type=Release";
        assert_eq!(version_from_build_info(info).as_deref(), Some("1.31.1"));
        assert_eq!(version_from_build_info("ORT Build Info: git-branch=HEAD, git-commit-id=6af1a93"), None);
        assert_eq!(version_from_build_info("git-branch=rel-1."), None);
    }

    #[test]
    fn version_is_read_from_a_versioned_file_name() {
        let version = |name: &str| version_from_file_name(Path::new(name));
        assert_eq!(version("/x/libonnxruntime.so.1.31.1").as_deref(), Some("1.31.1"));
        assert_eq!(version("libonnxruntime.1.22.0.dylib").as_deref(), Some("1.22.0"));
        assert_eq!(version("/usr/lib/libonnxruntime.so"), None);
        assert_eq!(version("libonnxruntime.so.1"), None);
    }
}
