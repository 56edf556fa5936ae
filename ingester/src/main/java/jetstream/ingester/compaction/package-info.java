/**
 * Compaction: rewrites sealed segments without the rows a later tombstone supersedes, below the
 * {@code compaction/seq} watermark; the tombstones a pass folds and the footer-only choice of candidate blocks.
 * May depend on {@code jetstream.segment}/{@code segment.io}, {@code store} and {@code writer}.
 */
package jetstream.ingester.compaction;
