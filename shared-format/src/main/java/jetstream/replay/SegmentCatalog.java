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
 * the active ones after them; or, for a remote-mode gateway, of the archive's sealed segments over
 * HTTP ({@link #SegmentCatalog(ArchiveHttp, BlockCache, FeedActiveBlocks)}: no active files; the
 * writer's active blocks come from the ingester's TCP feed when it is given). {@link #refresh()} rescans (a directory listing and
 * one header read per file, under the catalog's lock: call it off any event loop); a snapshot is
 * immutable and published through a volatile reference, so {@link #snapshot()} is lock-free and
 * readers holding one keep a consistent picture while a seal or rewrite happens.
 */
public final class SegmentCatalog {
    /** Sealed segments in index order, then active segment files (index order) past the last sealed one. */
    public record Snapshot(List<SealedSegment> sealed, List<SegmentName.Entry> active) {}

    private final Path dir;
    /** Set in remote mode: the sealed segments come from the archive's HTTP, there are no active ones. */
    private final ArchiveHttp archive;
    private final BlockCache cache;
    /** Remote mode with a TCP feed: the writer's active blocks; null otherwise. */
    private final FeedActiveBlocks activeBlocks;
    private volatile long listedNanos;
    private final Map<Path, SealedSegment> open = new HashMap<>();
    private volatile Snapshot snapshot = new Snapshot(List.of(), List.of());
    private final java.util.concurrent.atomic.AtomicLong refreshes = new java.util.concurrent.atomic.AtomicLong();
    /** A remote catalog lists the archive again after this long even without a seal notice. */
    private static final long REMOTE_RELIST_NANOS = 30_000_000_000L;

    public SegmentCatalog(Path dir) {
        this.dir = dir;
        this.archive = null;
        this.cache = null;
        this.activeBlocks = null;
    }

    /**
     * A remote-mode catalog: the archive's sealed segments over HTTP, their block indexes and blocks
     * fetched when read (the index bytes kept in {@code cache}).
     */
    public SegmentCatalog(ArchiveHttp archive, BlockCache cache) {
        this(archive, cache, null);
    }

    /**
     * A remote-mode catalog whose readers also reach the seqs past the archive's last sealed segment:
     * the complete blocks of the writer's active segments from {@code active} (null: none, those seqs
     * are served by no one).
     */
    public SegmentCatalog(ArchiveHttp archive, BlockCache cache, FeedActiveBlocks active) {
        this.dir = null;
        this.archive = archive;
        this.cache = cache;
        this.activeBlocks = active;
    }

    /** Where a remote-mode reader finds the writer's active blocks, or null. */
    public FeedActiveBlocks activeBlocks() {
        return activeBlocks;
    }

    /** The archive a remote-mode catalog reads, or null for a segment directory. */
    public ArchiveHttp archive() {
        return archive;
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
        if (archive != null) {
            // No listing to compare: list again while the archive is unreachable (readiness follows it) and
            // as a safety net for notices the feed did not carry.
            return !archive.reachable() || System.nanoTime() - listedNanos >= REMOTE_RELIST_NANOS;
        }
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

    /**
     * A snapshot newer than {@code seen}: the published one when another caller refreshed since, else a
     * rescan. Readers that meet the same lagging archive listing at once list it again once, not once each.
     */
    public synchronized Snapshot refreshSince(Snapshot seen) {
        Snapshot current = snapshot;
        return current != seen ? current : refresh();
    }

    /** Rescans the directory; files whose header checksum changed (rewritten) are remapped. */
    public synchronized Snapshot refresh() {
        if (archive != null) {
            return relist();
        }
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
                    s = SealedSegment.local(e.index(), e.path(), SegmentReader.openMapped(e.path(), zstd));
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

    /** Lists the archive's sealed segments; unchanged ones (same name and checksum) keep their object. */
    private Snapshot relist() {
        refreshes.incrementAndGet();
        Map<String, SealedSegment> held = new HashMap<>();
        for (SealedSegment s : snapshot.sealed()) {
            held.put(s.name(), s);
        }
        List<SealedSegment> sealed = new ArrayList<>();
        for (ArchiveHttp.Listed l : archive.list()) {
            SealedSegment s = held.get(l.name());
            if (s == null || s.checksum() != l.checksum()) {
                s = new SealedSegment(l.index(), l.name(), null, l.checksum(), l.minSeq(), l.maxSeq(), l.minWitnessedAt(),
                        l.maxWitnessedAt(), new ArchiveSegment(archive, cache, l.name(), l.checksum()));
            }
            sealed.add(s);
        }
        listedNanos = System.nanoTime();
        Snapshot s = new Snapshot(List.copyOf(sealed), List.of());
        snapshot = s;
        return s;
    }

    /** The sealed header, or null for an active file (checksum 0). */
    static SegmentHeader readHeader(Path p) throws IOException {
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
