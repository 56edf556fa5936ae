/**
 * The persisted lifecycle {@code bootstrap -> merging -> steady_state}: the phase machine, the phase record,
 * the merge drain with its rev filter and the merge-tail compaction hook, and the orchestrator meters.
 * May depend on {@code store}, {@code writer}, {@code backfill}, {@code live} and {@code jetstream.segment}.
 */
package jetstream.ingester.phase;
