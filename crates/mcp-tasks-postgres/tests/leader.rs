//! The maintenance leader's lease row: candidates campaigning at once never
//! both win a term; a term is kept by its holder, taken over only once it
//! has lapsed, and freed at once by resigning.

use std::sync::Arc;

use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::TaskStore;
use mcp_tasks_store::conformance::support::at;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn candidates_campaigning_at_once_elect_one_leader() {
    let Some(db) = TestDatabase::create().await else { return };
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(Arc::new(PostgresStore::open(&db.url()).await.expect("open")));
    }
    let mut campaigns = Vec::new();
    for c in 0..32usize {
        let leadership = stores[c % stores.len()].leadership();
        campaigns.push(tokio::spawn(async move {
            leadership.campaign(&format!("candidate-{c}"), at(0), at(15)).await.expect("campaign")
        }));
    }
    let mut winners = 0;
    for c in campaigns {
        winners += usize::from(c.await.unwrap());
    }
    assert_eq!(winners, 1, "exactly one candidate wins the term");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_term_lapses_or_is_resigned_before_another_wins() {
    let Some(db) = TestDatabase::create().await else { return };
    let leadership = PostgresStore::open(&db.url()).await.expect("open").leadership();
    assert!(leadership.campaign("a", at(0), at(15)).await.unwrap());
    assert!(!leadership.campaign("b", at(14), at(29)).await.unwrap(), "a's term is live");
    assert!(leadership.campaign("a", at(14), at(29)).await.unwrap(), "a renews");
    assert!(!leadership.campaign("b", at(28), at(43)).await.unwrap());
    assert!(leadership.campaign("b", at(29), at(44)).await.unwrap(), "lapsed at its end");
    assert!(!leadership.campaign("a", at(30), at(45)).await.unwrap(), "a lost it");
    leadership.resign("a").await.unwrap();
    assert!(!leadership.campaign("a", at(31), at(46)).await.unwrap(), "resigning a term one does not hold does nothing");
    leadership.resign("b").await.unwrap();
    assert!(leadership.campaign("a", at(31), at(46)).await.unwrap(), "a resigned term is free at once");
}
