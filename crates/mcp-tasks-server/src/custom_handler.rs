//! Serving a handler of your own behind [`TaskServer`](crate::TaskServer)'s
//! endpoint ([`TaskServerBuilder::handler`](crate::TaskServerBuilder::handler)):
//! the guard, limits and probes stay; the MCP methods are your rmcp
//! `ServerHandler`'s, with the durable tools added by [`Durable`].

use std::sync::Arc;

use axum::Router;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::durable::DurableTasks;
use crate::durable_handler::Durable;
use crate::fast_path::HandlerTraits;
use crate::shared_service::SharedService;

/// Mounts a handler at a path (the MCP endpoint's): the handler type
/// erased, so `TaskServer` stays one type whichever handler it serves.
/// Also says what the `tasks/get` fast path needs to know of the handler.
pub(crate) type Mount =
    Arc<dyn Fn(&DurableTasks, StreamableHttpServerConfig, &str) -> (Router, HandlerTraits) + Send + Sync>;

/// The mount for the handler `make` builds. `make` runs once per router;
/// each request gets a clone, wrapped in [`Durable`].
pub(crate) fn mount<H, F>(make: F) -> Mount
where
    H: ServerHandler + Clone,
    F: Fn(&DurableTasks) -> H + Send + Sync + 'static,
{
    Arc::new(move |tasks: &DurableTasks, config, path: &str| {
        let handler = make(tasks);
        let traits = HandlerTraits::of(&tasks.wrap(handler.clone()));
        let tasks = tasks.clone();
        let service: StreamableHttpService<Durable<H>, LocalSessionManager> =
            StreamableHttpService::new(move || Ok(tasks.wrap(handler.clone())), Default::default(), config);
        (Router::new().nest_service(path, SharedService::new(service)), traits)
    })
}
