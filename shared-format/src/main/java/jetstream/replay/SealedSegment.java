package jetstream.replay;

import java.nio.file.Path;

import jetstream.segment.SegmentReader;

/** One sealed segment of a {@link SegmentCatalog} snapshot: its index (file name order), path and reader. */
public record SealedSegment(long index, Path path, SegmentReader reader) {
    public long minSeq() {
        return reader.header().minSeq();
    }

    public long maxSeq() {
        return reader.header().maxSeq();
    }

    public long minWitnessedAt() {
        return reader.header().minWitnessedAt();
    }

    public long maxWitnessedAt() {
        return reader.header().maxWitnessedAt();
    }

    public long checksum() {
        return reader.header().checksum();
    }
}
