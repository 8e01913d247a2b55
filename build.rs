//! Passes the host target triple to the architecture test, so `cargo metadata` can be
//! asked about this platform's dependency graph only.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=LOREBANK_HOST_TARGET={target}");
}
