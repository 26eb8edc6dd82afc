//! `serve --otlp-endpoint`: the task spans (request, attempt, progress)
//! exported to an OpenTelemetry collector over OTLP/HTTP (protobuf), in
//! batches from the SDK's own thread. Off unless the flag is given, and then
//! nothing of it is built.

use std::time::Duration;

use anyhow::Context;
use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;

/// The OpenTelemetry service name of every span this binary exports.
pub(crate) const SERVICE_NAME: &str = "mcp-tasks";

/// The path OTLP/HTTP receivers take traces on, after the collector's base URL.
const TRACES_PATH: &str = "/v1/traces";

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long shutdown waits for the last spans to be sent.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// A collector endpoint as `--otlp-endpoint` takes it: an `http://` URL,
/// the collector's base (spans go to `URL/v1/traces`) or the full traces URL.
pub(crate) fn parse_endpoint(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.starts_with("https://") {
        return Err(format!(
            "{text:?}: this build sends OTLP over plain HTTP only; give an http:// collector endpoint \
             (a local collector or agent can forward over TLS)"
        ));
    }
    let Some(rest) = text.strip_prefix("http://") else {
        return Err(format!("{text:?} is not an http:// URL (e.g. http://127.0.0.1:4318)"));
    };
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{text:?} names no host (e.g. http://127.0.0.1:4318)"));
    }
    if rest.ends_with(TRACES_PATH) { Ok(format!("http://{rest}")) } else { Ok(format!("http://{rest}{TRACES_PATH}")) }
}

/// The running exporter: flushed and stopped by [`OtlpExport::shutdown`].
pub(crate) struct OtlpExport {
    provider: SdkTracerProvider,
}

impl OtlpExport {
    /// Builds the exporter for `traces_url` (from [`parse_endpoint`]) with
    /// the resource `service.name` = `mcp-tasks`, `service.version`, and
    /// `service.instance.id` = `instance` (unique per process start).
    pub(crate) fn start(traces_url: &str, instance: &str) -> anyhow::Result<OtlpExport> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(traces_url)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .with_context(|| format!("cannot set up OTLP export to {traces_url}"))?;
        let resource = Resource::builder()
            .with_service_name(SERVICE_NAME)
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .with_attribute(KeyValue::new("service.instance.id", instance.to_owned()))
            .build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        Ok(OtlpExport { provider })
    }

    /// The `tracing` layer that turns the task spans (and the runtime's and
    /// server's events inside them) into OpenTelemetry spans for export.
    pub(crate) fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let targets = Targets::new()
            .with_target(mcp_tasks_runtime::trace_context::TRACE_TARGET, tracing::Level::INFO)
            .with_target("mcp_tasks_runtime", tracing::Level::INFO)
            .with_target("mcp_tasks_server", tracing::Level::INFO);
        tracing_opentelemetry::layer().with_tracer(self.provider.tracer(SERVICE_NAME)).with_filter(targets)
    }

    /// Sends the spans not yet sent and stops the exporter (at graceful
    /// shutdown; a failure is logged, the server has stopped anyway).
    pub(crate) fn shutdown(self) {
        if let Err(e) = self.provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
            tracing::warn!(error = %e, "could not send the last spans to the OTLP endpoint");
        } else {
            tracing::info!("sent the last spans to the OTLP endpoint");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_endpoint;

    #[test]
    fn an_endpoint_is_a_base_or_traces_url_over_http() {
        assert_eq!(parse_endpoint("http://127.0.0.1:4318").unwrap(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(parse_endpoint("http://c:4318/").unwrap(), "http://c:4318/v1/traces");
        assert_eq!(parse_endpoint("http://c:4318/v1/traces").unwrap(), "http://c:4318/v1/traces");
        assert!(parse_endpoint("https://c:4318").unwrap_err().contains("plain HTTP"));
        assert!(parse_endpoint("c:4318").unwrap_err().contains("not an http:// URL"));
        assert!(parse_endpoint("http://").unwrap_err().contains("no host"));
    }
}
