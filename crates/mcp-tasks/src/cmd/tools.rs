//! `mcp-tasks tools URL`: a server's tools and whether each runs as a task
//! (required, optional, or forbidden: never), from its `tools/list`.
//!
//! Exit codes: 0 done; 2 anything else (a bad URL, the server unreachable
//! or refusing the token).

use std::process::ExitCode;

use mcp_tasks_client::{ClientOptions, TaskSupport, TasksClient};
use serde::Serialize;

use super::call::explained;
use super::inspect::{one_line, print_json, table};

/// Flags of `mcp-tasks tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
    url: String,
    /// Bearer token sent as `Authorization: Bearer …`.
    #[arg(long, value_name = "BEARER", env = "MCP_TASKS_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print JSON (an array of {name, taskSupport, description}).
    #[arg(long)]
    json: bool,
}

/// One tool, as printed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    name: String,
    task_support: &'static str,
    description: String,
}

/// Runs `mcp-tasks tools`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut options = ClientOptions::new(&args.url);
    options.bearer_token = args.token.clone();
    let client = TasksClient::connect(options).await.map_err(explained)?;
    let tools = client.list_tools().await.map_err(explained);
    client.close().await;
    let listed: Vec<Listed> = tools?
        .iter()
        .map(|t| Listed {
            name: t.name.to_string(),
            task_support: TaskSupport::of(t).as_str(),
            description: t.description.as_deref().unwrap_or("").to_owned(),
        })
        .collect();
    if args.json {
        print_json(&listed)?;
    } else if listed.is_empty() {
        println!("no tools");
    } else {
        let rows =
            listed.iter().map(|t| vec![t.name.clone(), t.task_support.to_owned(), one_line(&t.description, 80)]).collect();
        print!("{}", table(&["NAME", "TASK SUPPORT", "DESCRIPTION"], rows));
    }
    Ok(ExitCode::SUCCESS)
}
