//! rmcp's Streamable HTTP service behind an [`Arc`], so that routing a
//! request costs a reference count instead of a copy of the service.
//!
//! axum clones the service a route ends in for every request (and each
//! `from_fn` layer clones the service it wraps), and rmcp's own `call`
//! clones it again; a clone copies the transport's configuration, whose
//! allowed hosts and origins are lists of strings. Profiles showed those
//! copies and their drops at about a tenth of a poll's instructions, paid
//! even by the polls answered ahead of rmcp. Shared, the service is built
//! once and every request calls the same one ([`StreamableHttpService::handle`]).

use std::convert::Infallible;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Bytes, HttpBody};
use axum::http::{Request, Response};
use http_body_util::combinators::BoxBody;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;

/// A [`StreamableHttpService`] shared by every request routed to it.
pub(crate) struct SharedService<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> SharedService<S, M> {
    /// Shares `service`.
    pub(crate) fn new(service: StreamableHttpService<S, M>) -> Self {
        SharedService(Arc::new(service))
    }
}

impl<S, M> Clone for SharedService<S, M> {
    fn clone(&self) -> Self {
        SharedService(self.0.clone())
    }
}

impl<B, S, M> tower::Service<Request<B>> for SharedService<S, M>
where
    B: HttpBody + Send + 'static,
    B::Error: Display,
    B::Data: Send + 'static,
    S: rmcp::ServerHandler + Send + 'static,
    M: SessionManager,
{
    type Response = Response<BoxBody<Bytes, Infallible>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}
