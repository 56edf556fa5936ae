package jetstream.archive;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jetstream.planner.SegmentSummary;

/**
 * One generation of a sealed segment as served: the read-only mapping taken when the file was
 * opened (it keeps the old inode's bytes alive after a rename replaces the file, so a download that
 * started on it finishes on it), the file identity it was opened from, and its resident summary.
 */
record ServedSegment(SegmentSummary summary, ByteBuffer mapping, Object fileKey, long mtimeMillis) {

    /** The header checksum read from this generation's bytes (not from manifest metadata). */
    long checksum() {
        return mapping.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(4);
    }

    long size() {
        return mapping.limit();
    }

    /** A read-only view of {@code [off, off+len)}. */
    ByteBuffer slice(long off, long len) {
        return mapping.slice((int) off, (int) len).asReadOnlyBuffer();
    }
}
