/**
 * The {@code .jss} segment file format (facts §1–§3): on-disk structures and the read side.
 *
 * <h2>API for the file I/O side (active writer, seal, rewrite, CLI)</h2>
 *
 * <ul>
 *   <li>{@link jetstream.segment.BlockBuilder}: append rows, {@code toBody()}/{@code writeBody()}
 *       the exact uncompressed block body; {@code reset()} between blocks; {@code add(view, row[, indexedAt])}
 *       copies decoded rows (compaction, timestamp patch).</li>
 *   <li>{@link jetstream.segment.ZstdFrames}: {@code compress(...)} a body into one frame (checksum on,
 *       level 3 by default) and {@code decompress(...)} with the 1 GiB cap. One instance per thread.</li>
 *   <li>{@link jetstream.segment.BlockView}: {@code decode(body)} / {@code decodeFrame(zstd, frame, off, len,
 *       expectedSize)} into a reusable, allocation-light view.</li>
 *   <li>{@link jetstream.segment.Kind}, {@link jetstream.segment.SegmentLimits},
 *       {@link jetstream.segment.SegmentException} (typed like the Go sentinels).</li>
 * </ul>
 */
package jetstream.segment;
