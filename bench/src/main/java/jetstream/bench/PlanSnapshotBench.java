package jetstream.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import jetstream.planner.Manifest;
import jetstream.planner.Plan;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanLimits;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentHeader;
import jetstream.segment.io.SegmentName;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * planSnapshot over a synthetic manifest of 640 segments × 850 blocks (the full-network
 * shape) with a 3-DID filter, against the floor of merely walking every block's seq bounds (what
 * any planner must at least touch without blooms). Blocks carry {@code didsPerBlock} distinct DIDs;
 * the per-block blooms are right-sized for that, as seal sizes them. Setup prints the resident
 * bloom bytes per block.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PlanSnapshotBench {
    static final int SEGMENTS = 640;
    static final int BLOCKS = 850;
    static final int EVENTS_PER_BLOCK = 4096;

    @Param({"64"})
    int didsPerBlock;

    private Manifest manifest;
    private PlanFilter filter;
    private final PlanLimits limits = PlanLimits.DEFAULTS;

    @Setup
    public void setup() {
        SplittableRandom rnd = new SplittableRandom(42);
        GloomFilter.Params per = GloomFilter.optimalParams(didsPerBlock, 0.001);
        int bloomSize = (int) per.serializedSize();
        List<SegmentSummary> segs = new ArrayList<>(SEGMENTS);
        long seq = 0;
        long didCounter = 0;
        for (int s = 0; s < SEGMENTS; s++) {
            int[] events = new int[BLOCKS];
            long[] min = new long[BLOCKS];
            long[] max = new long[BLOCKS];
            byte[] blooms = new byte[BLOCKS * bloomSize];
            int segDids = BLOCKS * didsPerBlock;
            GloomFilter seg = GloomFilter.create(segDids, 0.001);
            for (int b = 0; b < BLOCKS; b++) {
                events[b] = EVENTS_PER_BLOCK;
                min[b] = seq + 1;
                seq += EVENTS_PER_BLOCK;
                max[b] = seq;
                GloomFilter f = new GloomFilter(per.numBlocks(), per.k());
                for (int d = 0; d < didsPerBlock; d++) {
                    byte[] did = did(didCounter++);
                    f.add(did);
                    seg.add(did);
                }
                f.writeTo(blooms, b * bloomSize);
            }
            String[] names = {"app.bsky.feed.post", "app.bsky.feed.like", "$identity", "$account"};
            byte[] masks = new byte[BLOCKS];
            for (int b = 0; b < BLOCKS; b++) {
                masks[b] = (byte) (1 | 2 | (rnd.nextInt(4) == 0 ? 4 : 0));
            }
            SegmentHeader h = new SegmentHeader(s + 1, 1, BLOCKS, (long) BLOCKS * EVENTS_PER_BLOCK, segDids,
                    min[0], max[BLOCKS - 1], 0, 0, 256, 256, 256, 256, 256);
            segs.add(new SegmentSummary(SegmentName.format(s), s, h, 256L << 20, 0, events, min, max,
                    seg.serialize(), blooms, bloomSize, names, masks, null));
        }
        manifest = Manifest.of(segs);
        // Three DIDs that exist somewhere in the archive: segments 10, 300 and 600.
        List<String> dids = List.of(new String(did(10L * BLOCKS * didsPerBlock + 5), StandardCharsets.US_ASCII),
                new String(did(300L * BLOCKS * didsPerBlock + 77), StandardCharsets.US_ASCII),
                new String(did(600L * BLOCKS * didsPerBlock + 1234), StandardCharsets.US_ASCII));
        filter = PlanFilter.parse(null, dids, null, null, null, limits);
        Plan p = SnapshotPlanner.plan(manifest, filter, limits);
        long blocks = manifest.blockCount();
        double perBlock = (double) manifest.residentBloomBytes() / blocks;
        System.out.printf("%nmanifest: %d blocks, resident bloom bytes %d (%.1f per block; x 5.5M blocks = %.2f GiB);"
                        + " plan: %d entries, %d blocks matched%n", blocks, manifest.residentBloomBytes(), perBlock,
                perBlock * 5.5e6 / (1L << 30), p.stats().entries(), p.stats().blocksMatched());
        for (int n : new int[] {16, 64, 128, 256, 1024, 4096}) {
            long size = GloomFilter.optimalParams(n, 0.001).serializedSize();
            System.out.printf("per-block bloom for %d distinct DIDs: %d bytes -> %.2f GiB for 5.5M blocks%n",
                    n, size, size * 5.5e6 / (1L << 30));
        }
    }

    static byte[] did(long i) {
        return ("did:plc:" + Long.toString(1_000_000_000_000L + i * 7919, 36) + "qwertyuiop").getBytes(StandardCharsets.US_ASCII);
    }

    @Benchmark
    public Plan plan3Dids() {
        return SnapshotPlanner.plan(manifest, filter, limits);
    }

    /** Floor: touch every block's seq bounds once, as a bloom-less planner must. */
    @Benchmark
    public long floorWalkBlockBounds() {
        long acc = 0;
        for (SegmentSummary s : manifest.segments()) {
            for (int b = 0; b < s.blockCount(); b++) {
                acc += s.blockMaxSeq(b) > 0 ? s.blockEvents(b) : 0;
            }
        }
        return acc;
    }
}
