/**
 * The steady writer of a segment tree (its own thread, a bounded queue of producers), the seq lease, the
 * capture-tree seq counter, the readable log every reader follows, and the shared byte budget.
 * May depend on {@code store}, {@code jetstream.segment.io} and {@code jetstream.feed}.
 */
package jetstream.ingester.writer;
