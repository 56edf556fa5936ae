package jetstream.ingester.compaction;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentPersistenceException;

/**
 * What a compaction pass reads before it rewrites anything ({@link Compactor}): the sealed segments of the
 * archive, the tombstones folded from their rows in {@code (from, target]}, the candidate segments those
 * tombstones may touch, and, after a restart, the in-memory {@link TombstoneSet} refilled from the rows
 * above the watermark. Read-only; a file that cannot be read is fatal ({@link SegmentPersistenceException}).
 */
final class SegmentScan {
    private SegmentScan() {}

    /** One sealed segment: its file name, path and header. */
    record Sealed(String name, Path path, SegmentHeader header) {}

    /** The sealed segments of {@code segmentsDir} in index order (the active file left out). */
    static List<Sealed> sealed(Path segmentsDir) {
        List<SegmentName.Entry> files;
        try {
            files = SegmentName.scan(segmentsDir);
        } catch (IOException e) {
            throw new SegmentPersistenceException("scanning", segmentsDir, e);
        }
        List<Sealed> out = new ArrayList<>(files.size());
        for (SegmentName.Entry f : files) {
            SegmentHeader h = readHeaderOrNull(f.path());
            if (h != null) {
                out.add(new Sealed(f.path().getFileName().toString(), f.path(), h));
            }
        }
        return out;
    }

    /** The sealed header, or null for the active file. */
    static SegmentHeader readHeaderOrNull(Path p) {
        try {
            return SegmentReader.readSealedHeader(p);
        } catch (SegmentException e) {
            if (e.type() == SegmentException.Type.ACTIVE_SEGMENT) {
                return null;
            }
            throw new SegmentException(e.type(), p + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new SegmentPersistenceException("reading the header of", p, e);
        }
    }

    static SegmentHeader readHeader(Path p) {
        SegmentHeader h = readHeaderOrNull(p);
        if (h == null) {
            throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, p + ": a rewritten segment reads as active");
        }
        return h;
    }

    static SegmentReader openSealed(Path p) {
        try {
            return SegmentReader.open(p, false);
        } catch (IOException e) {
            throw new SegmentPersistenceException("reading", p, e);
        } catch (SegmentException e) {
            throw new SegmentException(e.type(), p + ": " + e.getMessage(), e);
        }
    }

    /** Tombstones of the rows in {@code (from, target]}, read from the sealed files. */
    static Tombstones fold(List<Sealed> sealed, long from, long target, Consumer<Tombstones.Source> collected) {
        Tombstones t = new Tombstones();
        try (ZstdFrames zstd = new ZstdFrames()) {
            BlockView v = new BlockView();
            for (Sealed s : sealed) {
                if (s.header().maxSeq() <= from) {
                    continue;
                }
                SegmentReader r = openSealed(s.path());
                for (int b = 0; b < r.blockCount(); b++) {
                    BlockIndexEntry e = r.entry(b);
                    if (e.eventCount() == 0 || e.maxSeq() <= from) {
                        continue;
                    }
                    r.block(b, v, zstd);
                    for (int i = 0; i < v.size(); i++) {
                        long seq = v.seq(i);
                        if (seq > from && seq <= target) {
                            Tombstones.Source src = t.observe(v, i);
                            if (src != null) {
                                collected.accept(src);
                            }
                        }
                    }
                }
            }
        }
        return t;
    }

    /**
     * The sealed segments that may hold a superseded row: non-empty, starting below the highest
     * tombstone, and (while few DIDs are tombstoned) whose DID bloom admits one of them.
     */
    static List<Sealed> candidates(List<Sealed> sealed, Tombstones t, int bloomNarrowingMaxDids) {
        List<Sealed> out = new ArrayList<>();
        if (t.isEmpty()) {
            return out;
        }
        List<byte[]> dids = null;
        if (t.didCount() <= bloomNarrowingMaxDids) {
            dids = new ArrayList<>(t.didCount());
            for (byte[] d : t.didBytes()) {
                dids.add(d);
            }
        }
        for (Sealed s : sealed) {
            if (s.header().eventCount() == 0 || s.header().minSeq() >= t.maxSeq()) {
                continue;
            }
            if (dids != null) {
                SegmentReader r = openSealed(s.path());
                boolean any = false;
                for (byte[] d : dids) {
                    if (r.mightContainDid(d)) {
                        any = true;
                        break;
                    }
                }
                if (!any) {
                    continue;
                }
            }
            out.add(s);
        }
        return out;
    }

    /**
     * Refills {@code set} from the rows above {@code from} (sealed files and the active file's complete
     * blocks); stops early when {@code closing} turns true.
     */
    static void refill(Path segmentsDir, long from, TombstoneSet set, BooleanSupplier closing) {
        List<SegmentName.Entry> files;
        try {
            files = SegmentName.scan(segmentsDir);
        } catch (IOException e) {
            throw new SegmentPersistenceException("scanning", segmentsDir, e);
        }
        try (ZstdFrames zstd = new ZstdFrames()) {
            BlockView v = new BlockView();
            for (SegmentName.Entry f : files) {
                if (closing.getAsBoolean()) {
                    return;
                }
                SegmentHeader h = readHeaderOrNull(f.path());
                if (h != null) {
                    if (h.maxSeq() <= from) {
                        continue;
                    }
                    SegmentReader r = openSealed(f.path());
                    for (int b = 0; b < r.blockCount(); b++) {
                        if (r.entry(b).eventCount() > 0 && r.entry(b).maxSeq() > from) {
                            observeAbove(set, r.block(b, v, zstd), from);
                        }
                    }
                } else {
                    ActiveSegmentReader a;
                    try {
                        a = ActiveSegmentReader.open(f.path());
                    } catch (IOException e) {
                        throw new SegmentPersistenceException("reading", f.path(), e);
                    }
                    for (int b = 0; b < a.blockCount(); b++) {
                        observeAbove(set, a.block(b, v, zstd), from);
                    }
                }
            }
        }
    }

    private static void observeAbove(TombstoneSet set, BlockView v, long from) {
        for (int i = 0; i < v.size(); i++) {
            if (v.seq(i) > from) {
                set.observe(v, i);
            }
        }
    }
}
