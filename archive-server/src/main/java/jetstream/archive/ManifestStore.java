package jetstream.archive;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import jetstream.planner.DidFilterSpace;
import jetstream.planner.Manifest;
import jetstream.planner.SegmentSummary;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import org.jboss.logging.Logger;

/**
 * The resident manifest of {@code <data-dir>/segments}: every sealed file mapped read-only, its
 * header and collection index parsed once, its block index and blooms read in place from the mapping. Updated by whole-state swaps, so a request
 * sees one consistent archive; a changed file (new checksum after a rewrite) gets a new generation
 * while requests holding the old one keep serving it.
 */
public final class ManifestStore {
    private static final Logger LOG = Logger.getLogger(ManifestStore.class);

    /** The manifest and the served generations, swapped together. */
    record State(Manifest manifest, Map<String, ServedSegment> served) {
    }

    private final Path dir;
    private final AtomicReference<State> state;
    private final CompletableFuture<Void> loaded = new CompletableFuture<>();
    private final Set<String> unreadable = ConcurrentHashMap.newKeySet();
    /** Files the first load found (-1 until it has listed the directory) and has opened so far. */
    private volatile int loadTotal = -1;
    private volatile int loadDone;
    /** Builds group DID filters off the load and request paths (it reads every DID-hash section). */
    private final ExecutorService groupBuilder = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "did-group-filters");
        t.setDaemon(true);
        return t;
    });
    private final AtomicBoolean groupBuildQueued = new AtomicBoolean();

    /** A store whose group DID filters live on the heap (tests). */
    public ManifestStore(Path segmentsDir, MeterRegistry metrics) {
        this(segmentsDir, DidFilterSpace.heap(DidFilterSpace.DEFAULT_HEAP_BYTES), metrics);
    }

    /** A store whose group DID filters live in {@code filters} (the server maps them from its cache directory). */
    public ManifestStore(Path segmentsDir, DidFilterSpace filters, MeterRegistry metrics) {
        this.dir = segmentsDir;
        this.state = new AtomicReference<>(new State(Manifest.empty(filters), Map.of()));
        Gauge.builder("jetstream.manifest.segments.loaded", state, s -> s.get().manifest().segments().size())
                .description("sealed segments in the resident manifest").register(metrics);
        Gauge.builder("jetstream.manifest.resident.bloom.bytes", state, s -> s.get().manifest().residentBloomBytes())
                .description("bytes of segment and per-block DID blooms probed in place in the mapped footers (off-heap)").register(metrics);
        Gauge.builder("jetstream.manifest.did.group.filters", state, s -> s.get().manifest().didGroupFilters())
                .description("groups of 64 segments with a first-level DID filter (the others are probed segment by segment)")
                .register(metrics);
        Gauge.builder("jetstream.manifest.did.group.filter.bytes", state, s -> s.get().manifest().didGroupFilterBytes())
                .description("bytes of the group DID filters (mapped from the cache directory, off the heap, in a server)")
                .register(metrics);
        Gauge.builder("jetstream.manifest.unreadable.segments", unreadable, Set::size)
                .description("sealed segment files that failed to parse and are not served").register(metrics);
    }

    /** Completes when the first scan finished (exceptionally when it failed). */
    public CompletableFuture<Void> loaded() {
        return loaded;
    }

    State state() {
        return state.get();
    }

    public Manifest manifest() {
        return state.get().manifest();
    }

    /** Segment files the first load found, or -1 before it has listed the directory. */
    public int loadTotal() {
        return loadTotal;
    }

    /** Segment files the first load has opened so far (all of {@link #loadTotal()} once loaded). */
    public int loadDone() {
        return loadDone;
    }

    /** The first full load, counting its progress; later calls go through {@link #rescan()}. */
    public void initialLoad() {
        try {
            rescan(true);
            loaded.complete(null);
        } catch (IOException | RuntimeException e) {
            loaded.completeExceptionally(e);
        }
    }

    /**
     * Compares the directory with the resident state and (re)loads new or changed files, drops
     * vanished ones. Unchanged files (same identity, size and mtime) are not reopened.
     */
    public void rescan() throws IOException {
        rescan(false);
    }

    private synchronized void rescan(boolean first) throws IOException {
        State cur = state.get();
        Map<String, ServedSegment> next = new HashMap<>();
        boolean changed = false;
        List<SegmentName.Entry> files = Files.isDirectory(dir) ? SegmentName.scan(dir) : List.of();
        if (first) {
            loadTotal = files.size();
        }
        for (int i = 0; i < files.size(); i++) {
            if (first) {
                loadDone = i;
            }
            SegmentName.Entry e = files.get(i);
            String name = e.path().getFileName().toString();
            ServedSegment old = cur.served().get(name);
            BasicFileAttributes a;
            try {
                a = Files.readAttributes(e.path(), BasicFileAttributes.class);
            } catch (NoSuchFileException gone) {
                continue;
            }
            if (old != null && sameFile(old, a)) {
                next.put(name, old);
                continue;
            }
            ServedSegment fresh;
            try {
                fresh = open(e.path(), name, e.index(), old != null);
            } catch (SegmentException bad) {
                // One damaged file must not take the archive down: it is left out (404) and logged.
                LOG.errorf("segment %s is unreadable and not served: %s", name, bad.getMessage());
                unreadable.add(name);
                continue;
            }
            unreadable.remove(name);
            if (fresh != null) {
                next.put(name, fresh);
                changed = true;
            }
        }
        if (first) {
            loadDone = files.size();
        }
        if (changed || next.size() != cur.served().size()) {
            publish(next);
        }
    }

    /** Reloads one file now (the feed announced it sealed or rewritten); a vanished file is dropped. */
    public synchronized void refresh(String name) throws IOException {
        long index = SegmentName.parse(name);
        if (index < 0) {
            throw new IllegalArgumentException("not a segment name: " + name);
        }
        Path p = dir.resolve(name);
        State cur = state.get();
        Map<String, ServedSegment> next = new HashMap<>(cur.served());
        ServedSegment old = cur.served().get(name);
        ServedSegment fresh = Files.exists(p) ? open(p, name, index, old != null) : null;
        if (fresh == null) {
            next.remove(name);
        } else {
            next.put(name, fresh);
        }
        publish(next);
    }

    /**
     * The current generation of {@code name}, first reloading it when the file on disk is no longer
     * the one mapped (a rewrite the feed has not announced yet): a request never serves a generation
     * older than the file it could have opened itself.
     */
    ServedSegment current(String name) throws IOException {
        ServedSegment s = state.get().served().get(name);
        if (s == null) {
            return null;
        }
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(dir.resolve(name), BasicFileAttributes.class);
        } catch (NoSuchFileException gone) {
            return s;
        }
        if (sameFile(s, a)) {
            return s;
        }
        refresh(name);
        return state.get().served().get(name);
    }

    private static boolean sameFile(ServedSegment s, BasicFileAttributes a) {
        return Objects.equals(s.fileKey(), a.fileKey()) && s.size() == a.size()
                && s.mtimeMillis() == a.lastModifiedTime().toMillis();
    }

    private void publish(Map<String, ServedSegment> served) {
        List<SegmentSummary> summaries = new ArrayList<>(served.size());
        for (ServedSegment s : served.values()) {
            summaries.add(s.summary());
        }
        // the previous manifest's group DID filters are reused for groups whose segments did not
        // change; the others are built in the background (until then their segments plan by their blooms)
        state.set(new State(Manifest.reusing(summaries, state.get().manifest()), Map.copyOf(served)));
        if (groupBuildQueued.compareAndSet(false, true)) {
            groupBuilder.execute(this::buildGroupFilters);
        }
    }

    private void buildGroupFilters() {
        groupBuildQueued.set(false);
        try {
            Manifest base = state.get().manifest();
            Manifest built = Manifest.of(base.segments(), base);
            synchronized (this) {
                // a publish meanwhile queued another build for what it changed; keep what still fits
                State cur = state.get();
                state.set(new State(Manifest.reusing(cur.manifest().segments(), cur.manifest(), built), cur.served()));
            }
        } catch (RuntimeException e) {
            // the planner stays correct without group filters (segment blooms answer); say so loudly
            LOG.errorf(e, "building the group DID filters failed; plans probe every segment bloom");
        }
    }

    /**
     * Maps and parses a sealed file; active files (checksum 0) are not part of the archive. A
     * replacement generation is checksum-verified (docs/segment-format.md: verify after a rewrite). Only the
     * header, block index and collection index are read: blooms and the block index stay in the
     * mapping (off-heap), so heap and load time do not grow with the bloom bytes.
     */
    private static ServedSegment open(Path p, String name, long index, boolean replacement) throws IOException {
        ByteBuffer map;
        BasicFileAttributes a;
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            a = Files.readAttributes(p, BasicFileAttributes.class);
            long size = ch.size();
            if (size < SegmentHeader.SIZE) {
                return null;
            }
            ByteBuffer head = ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            ch.read(head, 4);
            if (head.getLong(0) == 0) {
                return null;
            }
            map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        }
        if (replacement) {
            SegmentReader.open(map, true);
        }
        SegmentSummary summary;
        try (ZstdFrames zstd = new ZstdFrames()) {
            summary = SegmentSummary.open(map, name, index, a.lastModifiedTime().toMillis(), zstd);
        }
        if (replacement) {
            LOG.infof("segment %s: new generation %s", name, summary.checksumHex());
        }
        return new ServedSegment(summary, map, a.fileKey(), a.lastModifiedTime().toMillis());
    }
}
