//! The [`Log`] of NATS JetStream (async-nats), for Debian's nats-server 2.9.10 and
//! later.
//!
//! A library `LIB` is the stream `lorebank-LIB` with subjects `lorebank.LIB.book.*`
//! (file storage, a 2-minute duplicate window, replicas as asked: 3 for a library
//! that must survive a server), and the object store `lorebank-LIB-checkpoints` for
//! checkpoints. Publishes carry `Nats-Msg-Id` and
//! `Nats-Expected-Last-Subject-Sequence`; reads of single messages go to the stream
//! leader (`STREAM.MSG.GET`, never a direct get a lagging replica may answer), and
//! bulk reads use an ordered consumer filtered on the book's subject.
//!
//! Every call blocks its thread on the runtime given at connection, so it must be
//! made off the runtime's own threads (a ledger's writer thread, `spawn_blocking`).

use std::ops::ControlFlow;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, object_store, stream};
use futures_util::StreamExt;
use tokio::io::AsyncReadExt;

use crate::log::{Log, LogError, Published, Stored};

/// How to reach and set up a library's stream.
#[derive(Clone, Debug)]
pub struct JetStreamOptions {
    /// The servers, comma-separated (`nats://10.0.0.1:4222,nats://10.0.0.2:4222`).
    pub urls: String,
    /// The library's name (a book name).
    pub library: String,
    /// Replicas of the stream and the object store when this node creates them.
    pub replicas: usize,
    /// How long one request to JetStream may take.
    pub timeout: Duration,
}

/// A library's stream and checkpoint store in NATS JetStream.
pub struct JetStream {
    runtime: tokio::runtime::Handle,
    client: async_nats::Client,
    stream: stream::Stream,
    context: jetstream::Context,
    checkpoints: object_store::ObjectStore,
    timeout: Duration,
}

/// The stream of library `library`.
pub fn stream_name(library: &str) -> String {
    format!("lorebank-{library}")
}

/// The object store of library `library`'s checkpoints.
pub fn checkpoint_bucket(library: &str) -> String {
    format!("lorebank-{library}-checkpoints")
}

/// How long a node that starts waits for JetStream to answer the creation of its
/// library's stream and checkpoint store: a cluster still electing its leaders, or
/// busy, answers late, and a node that gave up at once would fail to start.
const STARTUP_PATIENCE: Duration = Duration::from_secs(30);

/// The kinds of a stream creation that timed out, which [`patiently`] tries again.
macro_rules! stream_timed_out {
    () => {
        jetstream::context::CreateStreamErrorKind::TimedOut
            | jetstream::context::CreateStreamErrorKind::JetStreamUnavailable
    };
}

/// Runs `attempt` until it succeeds, fails for a reason `again` does not name, or
/// [`STARTUP_PATIENCE`] has passed, waiting a little longer between tries.
async fn patiently<T, E, F: std::future::Future<Output = Result<T, E>>>(
    mut attempt: impl FnMut() -> F,
    again: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let deadline = tokio::time::Instant::now() + STARTUP_PATIENCE;
    let mut pause = Duration::from_millis(250);
    loop {
        match attempt().await {
            Err(error) if again(&error) && tokio::time::Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(4));
            }
            result => return result,
        }
    }
}

fn unavailable(error: impl std::fmt::Display) -> LogError {
    LogError::Unavailable(error.to_string())
}

impl JetStream {
    /// Connects to the servers and finds, or creates, the library's stream and
    /// checkpoint store. Calls made later block on `runtime`.
    pub async fn connect(options: &JetStreamOptions, runtime: tokio::runtime::Handle) -> Result<JetStream, String> {
        let urls: Vec<&str> = options.urls.split(',').map(str::trim).filter(|url| !url.is_empty()).collect();
        if urls.is_empty() {
            return Err("--cluster: no server given".into());
        }
        // No echo: a node's subscription to its library's subjects (a prompt to catch
        // up) does not bring back its own publishes.
        let client = async_nats::ConnectOptions::new()
            .name("lorebank")
            .no_echo()
            .connection_timeout(options.timeout)
            .request_timeout(Some(options.timeout))
            .connect(urls.clone())
            .await
            .map_err(|error| format!("cannot connect to {}: {error}", urls.join(", ")))?;
        let context = jetstream::ContextBuilder::new().timeout(options.timeout).build(client.clone());
        let name = stream_name(&options.library);
        let subjects = format!("lorebank.{}.book.*", options.library);
        let config = stream::Config {
            name: name.clone(),
            description: Some(format!("lorebank library {}: one subject per book (docs/scale.md)", options.library)),
            subjects: vec![subjects.clone()],
            num_replicas: options.replicas,
            duplicate_window: Duration::from_secs(120),
            storage: stream::StorageType::File,
            retention: stream::RetentionPolicy::Limits,
            discard: stream::DiscardPolicy::Old,
            ..Default::default()
        };
        let mut stream = patiently(
            || context.get_or_create_stream(config.clone()),
            |error| matches!(error.kind(), stream_timed_out!()),
        )
        .await
        .map_err(|error| format!("cannot find or create the stream {name}: {error}"))?;
        let info = stream.info().await.map_err(|error| format!("stream {name}: {error}"))?;
        if !info.config.subjects.contains(&subjects) {
            return Err(format!("the stream {name} exists but does not hold the subjects {subjects}"));
        }
        if info.config.duplicate_window < Duration::from_secs(60) {
            return Err(format!(
                "the stream {name} has a duplicate window of {:?}: a retried publish could be stored twice (at least 60 s is needed)",
                info.config.duplicate_window
            ));
        }
        let bucket = checkpoint_bucket(&options.library);
        let checkpoints = match context.get_object_store(&bucket).await {
            Ok(store) => store,
            Err(_) => {
                let config = object_store::Config {
                    bucket: bucket.clone(),
                    description: Some(format!("lorebank library {}: one checkpoint per book", options.library)),
                    num_replicas: options.replicas,
                    storage: stream::StorageType::File,
                    ..Default::default()
                };
                // A bucket is a stream: its creation times out the way the stream's can,
                // and says so only as a failed bucket creation.
                patiently(
                    || context.create_object_store(config.clone()),
                    |error| {
                        matches!(
                            error.kind(),
                            jetstream::context::CreateKeyValueErrorKind::TimedOut
                                | jetstream::context::CreateKeyValueErrorKind::BucketCreate
                        )
                    },
                )
                .await
                .map_err(|error| format!("cannot find or create the object store {bucket}: {error}"))?
            }
        };
        Ok(JetStream { runtime, client, stream, context, checkpoints, timeout: options.timeout })
    }

    /// The largest message the servers take, in bytes.
    pub fn max_payload(&self) -> usize {
        self.client.server_info().max_payload
    }

    /// The client, for subscriptions.
    pub fn client(&self) -> async_nats::Client {
        self.client.clone()
    }

    fn block<T>(&self, work: impl std::future::Future<Output = Result<T, LogError>>) -> Result<T, LogError> {
        let timeout = self.timeout;
        self.runtime.block_on(async move {
            match tokio::time::timeout(timeout * 2, work).await {
                Ok(result) => result,
                Err(_) => Err(LogError::Unavailable(format!("no answer within {:.0} s", (timeout * 2).as_secs_f64()))),
            }
        })
    }
}

fn msg_id(headers: &async_nats::HeaderMap) -> Option<String> {
    headers.get("Nats-Msg-Id").map(|value| value.as_str().to_owned())
}

fn from_message(message: async_nats::jetstream::message::StreamMessage) -> Stored {
    Stored { position: message.sequence, msg_id: msg_id(&message.headers), bytes: message.payload.to_vec() }
}

impl Log for JetStream {
    fn publish(&self, subject: &str, expected: Option<u64>, msg_id: &str, bytes: &[u8]) -> Result<Published, LogError> {
        let mut publish = jetstream::message::PublishMessage::build()
            .payload(bytes::Bytes::copy_from_slice(bytes))
            .message_id(msg_id);
        if let Some(expected) = expected {
            publish = publish.expected_last_subject_sequence(expected);
        }
        let subject = subject.to_owned();
        self.block(async {
            let kind_of = |kind: jetstream::context::PublishErrorKind, error: String| match kind {
                jetstream::context::PublishErrorKind::WrongLastSequence => {
                    LogError::WrongLast { subject: subject.clone(), detail: error }
                }
                jetstream::context::PublishErrorKind::MaxPayloadExceeded => LogError::Refused(error),
                _ => LogError::Unavailable(error),
            };
            let ack = self
                .context
                .send_publish(subject.clone(), publish)
                .await
                .map_err(|error| kind_of(error.kind(), error.to_string()))?;
            let ack = ack.await.map_err(|error| kind_of(error.kind(), error.to_string()))?;
            Ok(Published { position: ack.sequence, duplicate: ack.duplicate })
        })
    }

    fn next(&self, subject: &str, from: u64) -> Result<Option<Stored>, LogError> {
        self.block(async {
            match self.stream.get_first_raw_message_by_subject(subject, from.max(1)).await {
                Ok(message) => Ok(Some(from_message(message))),
                Err(error) if error.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok(None),
                Err(error) => Err(unavailable(error)),
            }
        })
    }

    fn get(&self, position: u64) -> Result<Option<(String, Stored)>, LogError> {
        self.block(async {
            match self.stream.get_raw_message(position).await {
                Ok(message) => Ok(Some((message.subject.to_string(), from_message(message)))),
                Err(error) if error.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok(None),
                Err(error) => Err(unavailable(error)),
            }
        })
    }

    fn read_from(
        &self,
        subject: &str,
        from: u64,
        visit: &mut dyn FnMut(Stored) -> ControlFlow<()>,
    ) -> Result<(), LogError> {
        let timeout = self.timeout;
        self.runtime.block_on(async {
            let consumer = tokio::time::timeout(
                timeout,
                self.stream.create_consumer(consumer::pull::OrderedConfig {
                    filter_subject: subject.to_owned(),
                    deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: from.max(1) },
                    ..Default::default()
                }),
            )
            .await
            .map_err(|_| LogError::Unavailable("no answer to the consumer's creation".into()))?
            .map_err(unavailable)?;
            if consumer.cached_info().num_pending == 0 {
                return Ok(());
            }
            let mut messages = consumer.messages().await.map_err(unavailable)?;
            loop {
                let next = tokio::time::timeout(timeout, messages.next())
                    .await
                    .map_err(|_| LogError::Unavailable("the ordered consumer stopped delivering".into()))?;
                let Some(message) = next else { return Ok(()) };
                let message = message.map_err(unavailable)?;
                let info = message.info().map_err(unavailable)?;
                let (position, pending) = (info.stream_sequence, info.pending);
                let stored = Stored {
                    position,
                    msg_id: message.headers.as_ref().and_then(msg_id),
                    bytes: message.payload.to_vec(),
                };
                if visit(stored).is_break() || pending == 0 {
                    return Ok(());
                }
            }
        })
    }

    fn subjects(&self, prefix: &str) -> Result<Vec<String>, LogError> {
        self.block(async {
            let mut subjects = Vec::new();
            let mut listed = self.stream.info_with_subjects(format!("{prefix}*")).await.map_err(unavailable)?;
            while let Some(entry) = listed.next().await {
                let (subject, _) = entry.map_err(unavailable)?;
                subjects.push(subject);
            }
            subjects.sort();
            Ok(subjects)
        })
    }

    fn put_checkpoint(&self, name: &str, revision: u64, bytes: &[u8]) -> Result<(), LogError> {
        self.block(async {
            let meta = object_store::ObjectMetadata {
                name: name.to_owned(),
                description: Some(revision.to_string()),
                ..Default::default()
            };
            let mut reader = bytes;
            self.checkpoints.put(meta, &mut reader).await.map_err(unavailable)?;
            Ok(())
        })
    }

    fn checkpoint_revision(&self, name: &str) -> Result<Option<u64>, LogError> {
        self.block(async {
            match self.checkpoints.info(name).await {
                Ok(info) => Ok(info.description.and_then(|text| text.parse().ok())),
                Err(error) if error.kind() == object_store::InfoErrorKind::NotFound => Ok(None),
                Err(error) => Err(unavailable(error)),
            }
        })
    }

    fn get_checkpoint(&self, name: &str) -> Result<Option<(u64, Vec<u8>)>, LogError> {
        self.block(async {
            let revision = match self.checkpoints.info(name).await {
                Ok(info) => info.description.and_then(|text| text.parse::<u64>().ok()),
                Err(error) if error.kind() == object_store::InfoErrorKind::NotFound => return Ok(None),
                Err(error) => return Err(unavailable(error)),
            };
            let Some(revision) = revision else { return Ok(None) };
            let mut object = match self.checkpoints.get(name).await {
                Ok(object) => object,
                Err(error) if error.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
                Err(error) => return Err(unavailable(error)),
            };
            let mut bytes = Vec::new();
            object.read_to_end(&mut bytes).await.map_err(unavailable)?;
            Ok(Some((revision, bytes)))
        })
    }
}
