package jetstream.replay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;

/**
 * The read-only view of a segment directory: sealed segments (mapped once, reused while their
 * checksum holds) and the active ones after them. {@link #refresh()} rescans; a snapshot is
 * immutable, so readers holding one keep a consistent picture while a seal or rewrite happens.
 */
public final class SegmentCatalog {
    /** Sealed segments in index order, then active segment files (index order) past the last sealed one. */
    public record Snapshot(List<SealedSegment> sealed, List<SegmentName.Entry> active) {}

    private final Path dir;
    private final Map<Path, SealedSegment> open = new HashMap<>();
    private volatile Snapshot snapshot = new Snapshot(List.of(), List.of());

    public SegmentCatalog(Path dir) {
        this.dir = dir;
    }

    public Path dir() {
        return dir;
    }

    public Snapshot snapshot() {
        return snapshot;
    }

    /** Rescans the directory; files whose header checksum changed (rewritten) are remapped. */
    public synchronized Snapshot refresh() {
        List<SegmentName.Entry> entries;
        try {
            entries = SegmentName.scan(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list segment directory " + dir, e);
        }
        List<SealedSegment> sealed = new ArrayList<>();
        List<SegmentName.Entry> active = new ArrayList<>();
        Map<Path, SealedSegment> keep = new HashMap<>();
        for (SegmentName.Entry e : entries) {
            try {
                SegmentHeader h = readHeader(e.path());
                if (h == null) {
                    active.add(e);
                    continue;
                }
                SealedSegment s = open.get(e.path());
                if (s == null || s.checksum() != h.checksum()) {
                    s = new SealedSegment(e.index(), e.path(), SegmentReader.open(e.path(), false));
                }
                sealed.add(s);
                keep.put(e.path(), s);
            } catch (java.nio.file.NoSuchFileException gone) {
                // Removed between the listing and the open (a merge consumed it): not part of this snapshot.
            } catch (IOException ex) {
                throw new UncheckedIOException("cannot read segment " + e.path(), ex);
            }
        }
        long lastSealed = sealed.isEmpty() ? -1 : sealed.get(sealed.size() - 1).index();
        active.removeIf(a -> a.index() < lastSealed);
        open.clear();
        open.putAll(keep);
        Snapshot s = new Snapshot(List.copyOf(sealed), List.copyOf(active));
        snapshot = s;
        return s;
    }

    /** The sealed header, or null for an active file (checksum 0). */
    private static SegmentHeader readHeader(Path p) throws IOException {
        byte[] b = new byte[SegmentHeader.SIZE];
        try (var ch = java.nio.channels.FileChannel.open(p, java.nio.file.StandardOpenOption.READ)) {
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(b);
            while (buf.hasRemaining()) {
                if (ch.read(buf) < 0) {
                    return null;
                }
            }
        }
        if (SegmentHeader.storedChecksum(b, 0) == 0) {
            return null;
        }
        return SegmentHeader.parseSealed(b, 0);
    }
}
