//! Malformed JSON gets HTTP 400 with a JSON-RPC parse error (-32700), and the
//! server keeps serving.

use crate::common;
use common::*;

#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    let h = start().await;
    let (status, reply) = post_raw(&h.url, r#"{"jsonrpc":"2.0","id":1,"method":"#, &[("Mcp-Method", "tools/list")]).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    still_serves(&h.url).await;
    h.stop().await;
}
