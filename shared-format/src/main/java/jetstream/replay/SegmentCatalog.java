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
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;

/**
 * The read-only view of a segment directory: sealed segments (mapped once, reused while their
 * checksum holds; their blooms stay in the mapping, so the heap does not grow with the archive) and
 * the active ones after them. {@link #refresh()} rescans (a directory listing and
 * one header read per file, under the catalog's lock: call it off any event loop); a snapshot is
 * immutable and published through a volatile reference, so {@link #snapshot()} is lock-free and
 * readers holding one keep a consistent picture while a seal or rewrite happens.
 */
public final class SegmentCatalog {
    /** Sealed segments in index order, then active segment files (index order) past the last sealed one. */
    public record Snapshot(List<SealedSegment> sealed, List<SegmentName.Entry> active) {}

    private final Path dir;
    private final Map<Path, SealedSegment> open = new HashMap<>();
    private volatile Snapshot snapshot = new Snapshot(List.of(), List.of());
    private final java.util.concurrent.atomic.AtomicLong refreshes = new java.util.concurrent.atomic.AtomicLong();

    public SegmentCatalog(Path dir) {
        this.dir = dir;
    }

    public Path dir() {
        return dir;
    }

    public Snapshot snapshot() {
        return snapshot;
    }

    /** Rescans done so far (each reads every segment's header). */
    public long refreshes() {
        return refreshes.get();
    }

    /**
     * True when the directory names a segment file past the last sealed one that the snapshot lacks
     * (a new active file) or lacks a file the snapshot holds (merged away): a listing, no file is opened.
     */
    public boolean stale() {
        List<SegmentName.Entry> entries;
        try {
            entries = SegmentName.scan(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list segment directory " + dir, e);
        }
        Snapshot s = snapshot;
        java.util.Set<Path> listed = new java.util.HashSet<>();
        for (SegmentName.Entry e : entries) {
            listed.add(e.path());
        }
        java.util.Set<Path> held = new java.util.HashSet<>();
        for (SealedSegment x : s.sealed()) {
            held.add(x.path());
        }
        for (SegmentName.Entry x : s.active()) {
            held.add(x.path());
        }
        if (!listed.containsAll(held)) {
            return true;
        }
        long lastSealed = s.sealed().isEmpty() ? -1 : s.sealed().get(s.sealed().size() - 1).index();
        for (SegmentName.Entry e : entries) {
            if (e.index() > lastSealed && !held.contains(e.path())) {
                return true;
            }
        }
        return false;
    }

    /** Rescans the directory; files whose header checksum changed (rewritten) are remapped. */
    public synchronized Snapshot refresh() {
        try (ZstdFrames zstd = new ZstdFrames()) {
            return refresh(zstd);
        }
    }

    private Snapshot refresh(ZstdFrames zstd) {
        refreshes.incrementAndGet();
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
                    s = new SealedSegment(e.index(), e.path(), SegmentReader.openMapped(e.path(), zstd));
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
