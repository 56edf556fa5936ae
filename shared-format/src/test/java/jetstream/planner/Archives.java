package jetstream.planner;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.segment.DidHashSection;
import jetstream.segment.GloomFilter;
import jetstream.segment.Kind;
import jetstream.segment.SegmentHeader;
import jetstream.segment.io.SegmentName;

/**
 * Builds resident summaries straight from rows, the way seal sizes and fills them (docs/segment-format.md),
 * so planner tests can generate thousands of archives without writing files.
 */
final class Archives {
    private static final Map<Integer, GloomFilter.Params> PARAMS = new java.util.concurrent.ConcurrentHashMap<>();

    private Archives() {}

    /** A filter sized like seal sizes it; parameters memoized because sizing is the slow part. */
    static GloomFilter bloom(int expected) {
        GloomFilter.Params p = PARAMS.computeIfAbsent(Math.max(1, expected), n -> GloomFilter.optimalParams(n, 0.001));
        return new GloomFilter(p.numBlocks(), p.k());
    }

    record Row(long seq, int kind, String did, String collection) {}

    /** A block: its surviving rows and its seq envelope (kept from before compaction). */
    record Block(List<Row> rows, long minSeq, long maxSeq) {}

    /** A summary with a DID-hash section of its DIDs, as our seal writes it. */
    static SegmentSummary summary(long index, List<Block> blocks) {
        return summary(index, blocks, true, Set.of());
    }

    /**
     * A summary with ({@code section}) or without (a Go-written file) a DID-hash section; the
     * section leaves out the DIDs in {@code omit} (a wrong section, for tests that must catch it).
     */
    static SegmentSummary summary(long index, List<Block> blocks, boolean section, Set<String> omit) {
        int n = blocks.size();
        int[] events = new int[n];
        long[] min = new long[n];
        long[] max = new long[n];
        Map<String, Integer> ids = new LinkedHashMap<>();
        List<Set<Integer>> perBlock = new ArrayList<>();
        Set<String> segDids = new HashSet<>();
        List<Set<String>> blockDids = new ArrayList<>();
        long segMin = 0;
        long segMax = 0;
        long eventCount = 0;
        for (int b = 0; b < n; b++) {
            Block blk = blocks.get(b);
            events[b] = blk.rows().size();
            min[b] = blk.minSeq();
            max[b] = blk.maxSeq();
            if (b == 0) {
                segMin = blk.minSeq();
            }
            segMax = Math.max(segMax, blk.maxSeq());
            eventCount += blk.rows().size();
            Set<Integer> set = new HashSet<>();
            Set<String> dids = new HashSet<>();
            for (Row r : blk.rows()) {
                if (!r.collection().isEmpty()) {
                    set.add(ids.computeIfAbsent(r.collection(), k -> ids.size()));
                }
                String sentinel = Kind.of(r.kind()).sentinel();
                if (sentinel != null) {
                    set.add(ids.computeIfAbsent(sentinel, k -> ids.size()));
                }
                dids.add(r.did());
            }
            segDids.addAll(dids);
            perBlock.add(set);
            blockDids.add(dids);
        }
        int capacity = 1;
        for (Set<String> d : blockDids) {
            capacity = Math.max(capacity, d.size());
        }
        int bloomSize = n == 0 ? 0 : bloom(capacity).serializedSize();
        byte[] blooms = new byte[n * bloomSize];
        for (int b = 0; b < n; b++) {
            GloomFilter f = bloom(capacity);
            for (String d : blockDids.get(b)) {
                f.add(d.getBytes(StandardCharsets.UTF_8));
            }
            f.writeTo(blooms, b * bloomSize);
        }
        GloomFilter seg = bloom(segDids.size());
        for (String d : segDids) {
            seg.add(d.getBytes(StandardCharsets.UTF_8));
        }
        String[] names = ids.keySet().toArray(new String[0]);
        int maskLen = (names.length + 7) / 8;
        byte[] masks = new byte[n * maskLen];
        for (int b = 0; b < n; b++) {
            for (int id : perBlock.get(b)) {
                masks[b * maskLen + (id >>> 3)] |= (byte) (1 << (id & 7));
            }
        }
        SegmentHeader h = new SegmentHeader(0x1234_0000L + index + 1, 1, n, eventCount, segDids.size(), segMin,
                segMax, 0, 0, 256, 256, 256, 256, 256);
        byte[] hashes = null;
        if (section) {
            int[] hs = segDids.stream().filter(d -> !omit.contains(d))
                    .mapToInt(d -> DidHashSection.hash(GloomFilter.Probe.of(d.getBytes(StandardCharsets.UTF_8)))).toArray();
            hashes = DidHashSection.serialize(hs, hs.length);
        }
        return new SegmentSummary(SegmentName.format(index), index, h, 1000 + n, 0, events, min, max,
                seg.serialize(), blooms, bloomSize, names, masks, hashes);
    }
}
