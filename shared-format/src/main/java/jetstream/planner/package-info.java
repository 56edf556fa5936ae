/**
 * planSnapshot (docs/http-api.md: planSnapshot) as pure code: the resident {@link jetstream.planner.Manifest} of sealed
 * {@link jetstream.planner.SegmentSummary segment summaries}, the validated
 * {@link jetstream.planner.PlanFilter}, and {@link jetstream.planner.SnapshotPlanner}. The
 * archive-server adapts it to HTTP; a client can use the same filter for its exact row predicate.
 * May depend on {@code jetstream.segment} (the footers it summarises), {@code jetstream.atproto}
 * ({@code syntax}, {@code json}) and Jackson core (the request body); no Quarkus.
 */
package jetstream.planner;
