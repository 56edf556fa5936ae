package jetstream.replay;

import java.nio.file.Path;

import jetstream.segment.SegmentBlocks;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;

/**
 * One sealed segment of a {@link SegmentCatalog} snapshot: its index (file name order), name, header
 * summary and blocks. {@code path} is the local file, or null for a segment read over the archive's
 * HTTP. The summary never reads blocks, so a catalog of thousands of segments is cheap to walk.
 */
public record SealedSegment(long index, String name, Path path, long checksum, long minSeq, long maxSeq,
                            long minWitnessedAt, long maxWitnessedAt, SegmentBlocks blocks) {
    /** A mapped local file. */
    public static SealedSegment local(long index, Path path, SegmentReader reader) {
        SegmentHeader h = reader.header();
        return new SealedSegment(index, path.getFileName().toString(), path, h.checksum(), h.minSeq(), h.maxSeq(),
                h.minWitnessedAt(), h.maxWitnessedAt(), reader);
    }
}
