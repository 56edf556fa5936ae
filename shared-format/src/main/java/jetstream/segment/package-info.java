/**
 * The {@code .jss} segment file format (docs/segment-format.md): on-disk structures and the read side.
 * May depend on the JDK, zstd-jni and hash4j only: never on {@link jetstream.segment.io} or anything that uses it.
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
 *   <li>{@link jetstream.segment.SegmentHeader}: {@code activeHeaderBytes()} for a new file;
 *       {@code hasMagic}/{@code storedChecksum} for state detection; {@code parseSealed}.</li>
 *   <li>{@link jetstream.segment.BlockFraming}: {@code scan(FileChannel, size)} / {@code scan(ByteBuffer, size)}
 *       walks length prefixes from 256 and reports the last good offset (torn-tail recovery).</li>
 *   <li>{@link jetstream.segment.FooterBuilder}: seal/rewrite footer. {@code addBlock(offset, compressedSize,
 *       view[, envelope])} per block in file order, {@code keepHeaderBounds(original)} for compaction,
 *       {@code build(footerOffset)} returns a {@link jetstream.segment.Footer} (footer bytes to write at
 *       footerOffset, then the 256 finalized header bytes). {@code patchBlockIndex(...)} for the
 *       timestamp-import patch (tail copied byte for byte).</li>
 *   <li>{@link jetstream.segment.SegmentReader} (sealed, mmap, thread-safe),
 *       {@link jetstream.segment.ActiveSegmentReader} (active, up to the last complete block),
 *       {@link jetstream.segment.SegmentVerifier#verify} (one-line reason for the CLI).</li>
 *   <li>{@link jetstream.segment.Kind}, {@link jetstream.segment.SegmentLimits},
 *       {@link jetstream.segment.SegmentException} (typed like the Go sentinels).</li>
 * </ul>
 */
package jetstream.segment;
