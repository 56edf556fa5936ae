/**
 * The file I/O side of the {@code .jss} segment format: everything that creates, appends to, seals or
 * rewrites segment files, built on the on-disk structures of {@link jetstream.segment}.
 * May depend on {@link jetstream.segment} and the JDK only; the metadata store and the durability order are the
 * ingester's.
 *
 * <ul>
 *   <li>{@link jetstream.segment.io.SegmentName}: {@code seg_<10 base-36 digits>.jss} names and directory scans.</li>
 *   <li>{@link jetstream.segment.io.SegmentIO}: the seam every mutating file-system call goes through;
 *       {@link jetstream.segment.io.FaultInjectingIO} fails chosen calls in tests.</li>
 *   <li>{@link jetstream.segment.io.ActiveSegment}: one active file (create, append a block, resume after a
 *       crash with torn-tail truncation).</li>
 *   <li>{@link jetstream.segment.io.SegmentWriter}: a segment directory's writer with block and segment
 *       rotation.</li>
 *   <li>{@link jetstream.segment.io.SegmentSealer}: the seal sequence, footer derived from disk.</li>
 *   <li>{@link jetstream.segment.io.SegmentRewriter}: compaction and the timestamp-import patch via
 *       {@code .tmp} + fsync + rename + directory fsync.</li>
 *   <li>{@link jetstream.segment.io.SegmentPersistenceException}: the fatal error of every failed write,
 *       fsync, rename or truncate (ENOSPC named, with the operator action).</li>
 * </ul>
 */
package jetstream.segment.io;
