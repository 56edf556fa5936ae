package jetstream.ingester.compaction;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import jetstream.segment.BlockBloomRegion;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.CollectionIndex;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;

/**
 * Which blocks of a sealed segment may hold a row a pass drops, decided from the footer alone (no
 * block is decompressed): a row of DID d with seq s is dropped only when a tombstone of d has a
 * greater seq, so its block's bloom admits d, its envelope starts below that tombstone, and, for a
 * record tombstone, the block holds the tombstone's collection. The other blocks are copied unread
 * ({@link jetstream.segment.io.SegmentRewriter#compact(jetstream.segment.io.SegmentIO,
 * java.nio.file.Path, java.util.function.IntPredicate, jetstream.segment.io.SegmentRewriter.RowFilter)}).
 * Built once per pass, then shared read-only by the rewrite workers.
 */
final class BlockCandidates {
    private record Tomb(GloomFilter.Probe probe, long didSeq, long maxSeq, String[] collections, long[] seqs) {}

    private final List<Tomb> tombs;
    private final boolean everyBlock;

    /** @param maxDids above this many tombstoned DIDs every block is a candidate (probing costs more than it saves) */
    BlockCandidates(Tombstones t, int maxDids) {
        everyBlock = t.didCount() > maxDids;
        tombs = new ArrayList<>(everyBlock ? 0 : t.didCount());
        if (everyBlock) {
            return;
        }
        t.forEachDid((did, didSeq, byCollection) -> {
            String[] collections = new String[byCollection.size()];
            long[] seqs = new long[collections.length];
            long max = didSeq;
            int i = 0;
            for (Map.Entry<String, Long> e : byCollection.entrySet()) {
                collections[i] = e.getKey();
                seqs[i++] = e.getValue();
                max = Math.max(max, e.getValue());
            }
            tombs.add(new Tomb(GloomFilter.Probe.of(did.getBytes(StandardCharsets.UTF_8)), didSeq, max, collections, seqs));
        });
    }

    /** The blocks of {@code r} that may hold a dropped row. */
    BitSet of(SegmentReader r) {
        int n = r.blockCount();
        BitSet out = new BitSet(n);
        if (everyBlock || r.segmentBloom() == null) {
            out.set(0, n);
            return out;
        }
        BlockBloomRegion blooms = r.blockBlooms();
        CollectionIndex collections = r.collectionIndex();
        for (Tomb t : tombs) {
            if (!r.segmentBloom().mightContain(t.probe())) {
                continue;
            }
            int[] ids = new int[t.collections().length];
            for (int c = 0; c < ids.length; c++) {
                ids[c] = collections.id(t.collections()[c]);
            }
            for (int b = 0; b < n; b++) {
                BlockIndexEntry e = r.entry(b);
                if (!out.get(b) && e.eventCount() > 0 && Long.compareUnsigned(e.minSeq(), t.maxSeq()) < 0
                        && mayHold(t, ids, collections, b, e.minSeq()) && bloomAdmits(blooms, b, t.probe())) {
                    out.set(b);
                }
            }
        }
        return out;
    }

    /** A filter that does not parse admits everything (never a false negative). */
    private static boolean bloomAdmits(BlockBloomRegion blooms, int b, GloomFilter.Probe p) {
        try {
            return blooms.bloom(b).mightContain(p);
        } catch (SegmentException e) {
            return true;
        }
    }

    /** Whether block {@code b} (rows from {@code minSeq} up) can hold a row one of {@code t}'s tombstones supersedes. */
    private static boolean mayHold(Tomb t, int[] ids, CollectionIndex collections, int b, long minSeq) {
        if (Long.compareUnsigned(minSeq, t.didSeq()) < 0) {
            return true;
        }
        for (int c = 0; c < ids.length; c++) {
            if (ids[c] >= 0 && Long.compareUnsigned(minSeq, t.seqs()[c]) < 0 && collections.contains(b, ids[c])) {
                return true;
            }
        }
        return false;
    }
}
