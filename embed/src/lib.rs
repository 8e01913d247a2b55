//! Embed: the low-trust candidate tier.
//!
//! This crate will own ONNX embeddings through `ort`, brute-force cosine search and
//! the model identity stored with every vector. Its output only ever becomes review
//! candidates (`CandidateProposed` with low trust), never injected context.
//!
//! Nothing on the hot path or in `replay` may depend on it.
