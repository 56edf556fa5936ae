package jetstream.planner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentHeader;
import jetstream.segment.io.SegmentName;
import org.junit.jupiter.api.Test;

/**
 * The batched segment-bloom scan answers exactly what probing each segment bloom one by one
 * answers ({@link SegmentSummary#segmentMightContain}), so plans are unchanged: over random
 * manifests with blooms of every k and many sizes (some missing, badly framed or failing their CRC)
 * and random DID filters and seq windows, including manifests longer than one scan chunk.
 */
class SegmentBloomScanTest {
    @Test
    void scanAgreesWithProbingEachSegmentBloom() {
        long seed = Long.getLong("jetstream.planner.seed", System.nanoTime());
        Random rnd = new Random(seed);
        long yes = 0;
        long no = 0;
        for (int c = 0; c < 40; c++) {
            String where = "seed " + seed + " case " + c;
            int nSegs = c % 4 == 0 ? SegmentBloomScan.CHUNK * 2 + rnd.nextInt(50) : 1 + rnd.nextInt(40);
            List<SegmentSummary> segs = new ArrayList<>();
            long seq = 0;
            for (int s = 0; s < nSegs; s++) {
                segs.add(segment(rnd, s, seq));
                seq += 10;
            }
            Manifest m = Manifest.of(segs);
            int nProbes = 1 + rnd.nextInt(4);
            GloomFilter.Probe[] probes = new GloomFilter.Probe[nProbes];
            for (int p = 0; p < nProbes; p++) {
                probes[p] = GloomFilter.Probe.of(did(rnd.nextInt(3000)));
            }
            long after = rnd.nextBoolean() ? 0 : rnd.nextInt((int) seq + 1);
            boolean hasBefore = rnd.nextInt(3) == 0;
            long before = hasBefore ? rnd.nextInt((int) seq + 1) : 0;
            SegmentBloomScan scan = new SegmentBloomScan(m.segments(), probes, after, hasBefore, before);
            for (int i = 0; i < nSegs; i++) {
                SegmentSummary seg = m.segments().get(i);
                boolean inWindow = seg.maxSeq() > after && !(hasBefore && seg.minSeq() > before);
                boolean want = false;
                for (GloomFilter.Probe p : probes) {
                    want |= seg.segmentMightContain(p);
                }
                want &= inWindow;
                assertEquals(want, scan.mayHold(i), where + ": segment " + i);
                if (inWindow) {
                    if (want) {
                        yes++;
                    } else {
                        no++;
                    }
                }
            }
        }
        assertTrue(yes > 100 && no > 100, "both answers exercised: " + yes + " maybe, " + no + " no");
    }

    private static SegmentSummary segment(Random rnd, int s, long seq) {
        int k = GloomFilter.MIN_K + rnd.nextInt(GloomFilter.MAX_K - GloomFilter.MIN_K + 1);
        GloomFilter bloom = new GloomFilter(1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 300), k);
        int dids = rnd.nextInt(400);
        int base = rnd.nextInt(3000);
        for (int d = 0; d < dids; d++) {
            bloom.add(did((base + d) % 3000));
        }
        byte[] segBloom = bloom.serialize();
        switch (rnd.nextInt(12)) {
            case 0 -> segBloom = null;
            case 1 -> segBloom[0] = 2;
            case 2 -> segBloom[GloomFilter.HEADER_SIZE] ^= 1;
            default -> { }
        }
        GloomFilter per = new GloomFilter(1, 3);
        byte[] blockBloom = per.serialize();
        SegmentHeader h = new SegmentHeader(s + 1, 1, 1, 10, dids, seq + 1, seq + 10, 0, 0, 256, 256, 256, 256, 256);
        return new SegmentSummary(SegmentName.format(s), s, h, 1 << 20, 0, new int[] {10}, new long[] {seq + 1},
                new long[] {seq + 10}, segBloom, blockBloom, blockBloom.length, new String[] {"app.bsky.feed.post"},
                new byte[] {1});
    }

    private static byte[] did(int i) {
        return ("did:plc:scan" + i).getBytes(StandardCharsets.US_ASCII);
    }
}
