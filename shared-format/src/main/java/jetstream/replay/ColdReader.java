package jetstream.replay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

import jetstream.filter.CollectionSet;
import jetstream.filter.WantedDids;
import jetstream.filter.KindClass;
import jetstream.filter.SubscriptionFilter;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockIndex;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.CollectionIndex;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentBlocks;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;

/**
 * One subscriber's cold replay over segment files: sealed segments through their footers (blocks
 * the filter cannot match are skipped using the DID blooms and the collection index; over the archive's
 * HTTP, using its planSnapshot), then active segments up to their last complete block (in remote mode,
 * over the ingester's feed). Rows are handed over in seq order; the caller applies
 * the exact filter (block skipping is only a superset test).
 *
 * <p>Coverage is checked at block granularity: every seq between the start and the requested end
 * is inside some block envelope or a registered vacancy, else {@link CoverageGapException}; in remote mode
 * seqs missing before a listed segment or the ingester's active blocks are a {@link ListingBehindException}
 * (the archive has not loaded a seal yet). Not thread-safe: one per subscriber.
 */
public final class ColdReader implements AutoCloseable {
    /** Receives rows; {@code view} is valid only during the call. */
    @FunctionalInterface
    public interface RowVisitor {
        void row(BlockView view, int row);
    }

    private final SegmentCatalog catalog;
    private final BlockCache cache;
    private final VacancySet vacancies;
    private final SubscriptionFilter filter;
    private final ZstdFrames zstd = new ZstdFrames();
    private final BlockView view = new BlockView();
    private final Map<Long, BitSet> candidates = new HashMap<>();
    private long blocksSkipped;
    private long blocksRead;
    /** Rows handed over during the current {@link #read}. */
    private int visited;
    /** The seq the current scan has delivered up to, where a scan of a refreshed snapshot resumes. */
    private long position;
    /** Marks a segment whose every block is read (a null cannot be cached). */
    private static final BitSet READ_ALL = new BitSet(0);
    /** Candidate sets kept before the oldest are dropped (a reader moves forward). */
    private static final int HELD_CANDIDATES = 16;
    /** Remote mode with a filter that can skip blocks: the archive's planner; null otherwise. */
    private final RemotePlan remotePlan;
    /** Scans of one read that may meet a rewritten segment before it fails. */
    private static final int STALE_RETRIES = 3;

    public ColdReader(SegmentCatalog catalog, BlockCache cache, VacancySet vacancies, SubscriptionFilter filter) {
        this.catalog = catalog;
        this.cache = cache;
        this.vacancies = vacancies;
        this.filter = filter;
        this.remotePlan = catalog.archive() == null ? null : RemotePlan.of(filter);
    }

    public long blocksSkipped() {
        return blocksSkipped;
    }

    public long blocksRead() {
        return blocksRead;
    }

    /**
     * Visits stored rows with seq in {@code [from, until)}, stopping at a block boundary once
     * {@code maxRows} rows were visited. Returns the next seq to read: {@code until} when the range
     * is exhausted.
     *
     * @throws CoverageGapException when seqs in the range are neither stored nor vacant
     * @throws ListingBehindException in remote mode, when the archive's listing still lacks seqs after a relist
     */
    public long read(long from, long until, int maxRows, RowVisitor visitor) {
        try {
            long next = scanOrRefresh(catalog.snapshot(), from, until, maxRows, visitor);
            if (next < until && visited < maxRows) {
                // The snapshot may predate a flush or a seal: look again before calling it a gap.
                next = scanOrRefresh(catalog.refresh(), next, until, maxRows, visitor);
            }
            if (next < until && visited < maxRows) {
                if (!vacancies.covers(next, until)) {
                    throw new CoverageGapException(next, until, "past the end of the archive");
                }
                next = until;
            }
            return next;
        } finally {
            visited = 0;
        }
    }

    /**
     * Scans {@code snap}; a segment the archive rewrote (compaction) or merged away after the snapshot was
     * taken is seen when its blocks are fetched, a seal missing from the listing at the hole it leaves: the
     * catalog is refreshed and the scan goes on from the same seq in the new picture (rows already visited
     * are not visited again).
     */
    private long scanOrRefresh(SegmentCatalog.Snapshot snap, long from, long until, int maxRows, RowVisitor visitor) {
        for (int attempt = 1; ; attempt++) {
            try {
                return scan(snap, from, until, maxRows, visitor);
            } catch (StaleSegmentException | ListingBehindException e) {
                if (attempt >= STALE_RETRIES) {
                    throw e;
                }
                from = position;
                snap = e instanceof ListingBehindException ? catalog.refreshSince(snap) : catalog.refresh();
            }
        }
    }

    private long scan(SegmentCatalog.Snapshot snap, long from, long until, int maxRows, RowVisitor visitor) {
        long expected = from;
        position = from;
        for (SealedSegment s : snap.sealed()) {
            if (expected >= until || visited >= maxRows) {
                return Math.min(expected, until);
            }
            if (s.maxSeq() < expected) {
                continue;
            }
            position = expected;
            SegmentBlocks r = s.blocks();
            BlockIndex index = r.blockIndex();
            BitSet cand = candidates(s, index);
            for (int b = 0; b < index.size(); b++) {
                BlockIndexEntry e = index.get(b);
                if (e.maxSeq() < expected) {
                    continue;
                }
                if (e.minSeq() > expected) {
                    position = expected;
                    gap(expected, Math.min(e.minSeq(), until), s.name(), b == 0);
                    expected = e.minSeq();
                }
                if (expected >= until) {
                    return until;
                }
                if (cand != null && !cand.get(b)) {
                    blocksSkipped++;
                } else {
                    position = expected;
                    byte[] body = cache.get(new BlockCache.Key(s.checksum(), b));
                    if (body == null) {
                        r.block(b, view, zstd);
                        body = copyBody(view);
                        cache.put(new BlockCache.Key(s.checksum(), b), body);
                    } else {
                        view.decode(body, 0, body.length);
                    }
                    blocksRead++;
                    deliver(expected, until, visitor);
                }
                expected = e.maxSeq() + 1;
                if (visited >= maxRows) {
                    return Math.min(expected, until);
                }
            }
        }
        if (catalog.activeBlocks() != null) {
            return scanFeedActive(catalog.activeBlocks(), expected, until, maxRows, visitor);
        }
        for (SegmentName.Entry a : snap.active()) {
            if (expected >= until || visited >= maxRows) {
                return Math.min(expected, until);
            }
            ActiveSegmentReader r;
            try {
                r = ActiveSegmentReader.open(a.path());
            } catch (java.nio.file.NoSuchFileException | SegmentException sealedOrGone) {
                // Sealed or removed since the snapshot: the caller's refresh sees its new form.
                return expected;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open active segment " + a.path(), e);
            }
            long[] offsets = r.scan().offsets();
            for (int b = 0; b < r.blockCount(); b++) {
                BlockCache.Key key = new BlockCache.Key(-(a.index() + 1), offsets[b]);
                byte[] body = cache.get(key);
                if (body == null) {
                    r.block(b, view, zstd);
                    body = copyBody(view);
                    cache.put(key, body);
                } else {
                    view.decode(body, 0, body.length);
                }
                if (view.size() == 0) {
                    continue;
                }
                expected = visitDecoded(expected, until, a.path().getFileName().toString(), visitor);
                if (expected >= until) {
                    return until;
                }
                if (visited >= maxRows) {
                    return expected;
                }
            }
        }
        return Math.min(expected, until);
    }

    /**
     * Remote mode past the archive's last sealed segment: the writer's active blocks over the feed, read
     * like a local active file. Seqs below the ingester's first active seq were sealed after the archive
     * listing (a {@link ListingBehindException}: the listing is refreshed and the scan resumes) unless
     * they are vacant.
     */
    private long scanFeedActive(FeedActiveBlocks src, long expected, long until, int maxRows, RowVisitor visitor) {
        while (expected < until && visited < maxRows) {
            position = expected;
            FeedActiveBlocks.Found f = src.find(expected, until, zstd);
            if (expected < f.activeFrom()) {
                if (!vacancies.covers(expected, Math.min(f.activeFrom(), until))) {
                    throw new ListingBehindException(expected, Math.min(f.activeFrom(), until),
                            "sealed below the ingester's active blocks");
                }
                expected = f.activeFrom();
                continue;
            }
            if (f.body() == null) {
                return expected;
            }
            view.decode(f.body(), 0, f.body().length);
            long after = visitDecoded(expected, until, "an active segment", visitor);
            if (after == expected) {
                return expected;
            }
            expected = after;
        }
        return Math.min(expected, until);
    }

    /**
     * Hands over the rows of the decoded {@link #view} from {@code expected} (a jump before its first row
     * must be a registered vacancy). Returns the seq after the block, {@code until} when the range ends
     * first, or {@code expected} for a block wholly below it.
     */
    private long visitDecoded(long expected, long until, String where, RowVisitor visitor) {
        long min = view.seq(0);
        long max = view.seq(view.size() - 1);
        if (max < expected) {
            return expected;
        }
        if (min > expected) {
            gap(expected, Math.min(min, until), where, false);
            expected = min;
        }
        if (expected >= until) {
            return until;
        }
        blocksRead++;
        deliver(expected, until, visitor);
        return max + 1;
    }

    private void deliver(long from, long until, RowVisitor visitor) {
        for (int i = 0; i < view.size(); i++) {
            long seq = view.seq(i);
            if (seq >= from && seq < until) {
                visitor.row(view, i);
                visited++;
            }
        }
    }

    /**
     * Seqs {@code [from, toExclusive)} lack a block: fine when vacant. In remote mode a hole before a listed
     * segment's first block is a segment the archive has not listed yet; anywhere else the seqs are lost.
     */
    private void gap(long from, long toExclusive, String where, boolean beforeSegment) {
        if (vacancies.covers(from, toExclusive)) {
            return;
        }
        if (beforeSegment && catalog.archive() != null) {
            throw new ListingBehindException(from, toExclusive, "before " + where);
        }
        throw new CoverageGapException(from, toExclusive, "before a block of " + where);
    }

    private static byte[] copyBody(BlockView v) {
        byte[] out = new byte[v.bodyLength()];
        System.arraycopy(v.buffer(), v.bodyOffset(), out, 0, out.length);
        return out;
    }

    /**
     * Blocks of {@code s} that may hold a matching row, or null for "all". Cached per segment checksum (the
     * segments a reader is in, a few at a time). A remote segment asks the archive's planner.
     */
    private BitSet candidates(SealedSegment s, BlockIndex index) {
        if (filter.isMatchAll()) {
            return null;
        }
        if (candidates.size() >= HELD_CANDIDATES) {
            candidates.clear();
        }
        BitSet c;
        if (s.blocks().skipsBlocks()) {
            c = candidates.computeIfAbsent(s.checksum(), k -> compute(s.blocks(), index.size()));
        } else if (remotePlan != null) {
            c = candidates.computeIfAbsent(s.checksum(), k -> {
                BitSet planned = remotePlan.blocks(catalog.archive(), s, index);
                return planned == null ? READ_ALL : planned;
            });
        } else {
            return null;
        }
        return c == READ_ALL ? null : c;
    }

    private BitSet compute(SegmentBlocks r, int blockCount) {
        BitSet out = null;
        WantedDids dids = filter.dids();
        if (dids != null) {
            BitSet any = new BitSet(blockCount);
            dids.forEachUtf8(d -> any.or(r.blocksForDid(d)));
            out = any;
        }
        BitSet byKind = kindBlocks(r, blockCount);
        if (byKind != null) {
            if (out == null) {
                out = byKind;
            } else {
                out.and(byKind);
            }
        }
        return out;
    }

    /**
     * Blocks that can hold a row the kinds/collections parts admit, from the collection index. Null
     * when commits are admitted without a collection constraint (commit rows carry no sentinel).
     * Commit rows in segments always carry a collection, so an empty-collection commit cannot hide
     * in a skipped block.
     */
    private BitSet kindBlocks(SegmentBlocks r, int blockCount) {
        int mask = filter.kindMask();
        boolean all = mask == SubscriptionFilter.ALL_KINDS;
        CollectionSet coll = filter.collections();
        boolean commits = all || (mask & KindClass.COMMIT) != 0;
        if (commits && coll == null) {
            return null;
        }
        if (all && !filter.isV1()) {
            // Unknown future kinds have no sentinel and pass a v2 filter without kinds: cannot skip.
            return null;
        }
        CollectionIndex idx = r.collectionIndex();
        BitSet out = new BitSet(blockCount);
        if (filter.isV1() || all || (mask & KindClass.IDENTITY) != 0) {
            out.or(idx.blocksFor("$identity"));
        }
        if (filter.isV1() || all || (mask & KindClass.ACCOUNT) != 0) {
            out.or(idx.blocksFor("$account"));
        }
        if (!filter.isV1() && (mask & KindClass.SYNC) != 0) {
            out.or(idx.blocksFor("$sync"));
        }
        if (commits) {
            for (int id = 0; id < idx.collectionCount(); id++) {
                String name = idx.name(id);
                if (!name.startsWith("$") && coll.matches(name)) {
                    out.or(idx.blocksFor(name));
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        zstd.close();
    }
}
