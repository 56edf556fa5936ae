/**
 * Reading the archive back for cold replay: the segment catalog (sealed and active files), cursor
 * resolution (seq and time cursors, lookback floor), per-subscriber cold readers that skip blocks by
 * bloom and collection index, a shared byte-bounded block cache, and vacancy accounting.
 * May depend on {@code jetstream.segment}, {@code jetstream.segment.io} and {@code jetstream.filter}.
 */
package jetstream.replay;
