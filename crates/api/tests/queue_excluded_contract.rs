//! A line's exclusions (issue 30: refusals at the door counted by reason for the drop's report),
//! on both stores: every reason is reported, counts add up however refusals race, and lines
//! count apart.

use std::sync::Arc;

use domain::queue::excluded::Exclusion;
use store::queue_excluded::{CountExclusion, ReadExclusions};
use testkit::ids::pack;

trait ExclusionStore: CountExclusion + ReadExclusions {}
impl<S: CountExclusion + ReadExclusions> ExclusionStore for S {}

testkit::store_contract!(
    arc:
    every_reason_is_reported_from_zero,
    racing_refusals_are_each_counted_once,
);

async fn every_reason_is_reported_from_zero(store: Arc<impl ExclusionStore>) {
    let counts = store.exclusions(&pack("quiet")).await.unwrap();
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        vec![(Exclusion::HumanCheckFailed, 0)]
    );
}

async fn racing_refusals_are_each_counted_once(store: Arc<impl ExclusionStore + 'static>) {
    testkit::at_once(40, |_| {
        let store = store.clone();
        async move {
            store
                .count_exclusion(&pack("busy"), Exclusion::HumanCheckFailed)
                .await
                .unwrap();
        }
    })
    .await;
    store
        .count_exclusion(&pack("other"), Exclusion::HumanCheckFailed)
        .await
        .unwrap();
    let busy = store.exclusions(&pack("busy")).await.unwrap();
    assert_eq!(busy[&Exclusion::HumanCheckFailed], 40);
    let other = store.exclusions(&pack("other")).await.unwrap();
    assert_eq!(other[&Exclusion::HumanCheckFailed], 1);
}
