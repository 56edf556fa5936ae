package jetstream.planner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.CollectionIndex;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Summaries that read the block index and blooms in place from the mapped footer plan exactly what
 * heap copies of the same footers plan: planSnapshot answers are byte-identical, a damaged block
 * bloom included (it answers "maybe" either way).
 */
@Tag("unit")
class MappedSummaryTest {
    private static final String[] COLLECTIONS = {
        "app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "com.example.thing", "app.bsky.feed.repost",
    };
    private static final String[] PATTERNS = {"app.bsky.feed.post", "app.bsky.*", "com.example.*", "org.none.thing"};
    private static final String[] KINDS = {"commit", "identity", "account", "sync"};

    @TempDir
    Path dir;

    private static String did(int i) {
        return "did:plc:" + String.format("%024d", i);
    }

    /** The heap summary the manifest used to build: every array copied out of a parsed reader. */
    private static SegmentSummary heapCopy(SegmentReader r, String name, long index) {
        int blocks = r.blockCount();
        int[] events = new int[blocks];
        long[] min = new long[blocks];
        long[] max = new long[blocks];
        for (int b = 0; b < blocks; b++) {
            BlockIndexEntry e = r.entry(b);
            events[b] = (int) e.eventCount();
            min[b] = e.minSeq();
            max[b] = e.maxSeq();
        }
        byte[] region = new byte[r.blockBlooms().serializedSize()];
        r.blockBlooms().writeTo(region, 0);
        CollectionIndex ci = r.collectionIndex();
        String[] names = new String[ci.collectionCount()];
        for (int i = 0; i < names.length; i++) {
            names[i] = ci.name(i);
        }
        int maskLen = (names.length + 7) / 8;
        byte[] masks = new byte[blocks * maskLen];
        for (int b = 0; b < blocks; b++) {
            for (int id = 0; id < names.length; id++) {
                if (ci.contains(b, id)) {
                    masks[b * maskLen + (id >>> 3)] |= (byte) (1 << (id & 7));
                }
            }
        }
        GloomFilter seg = r.segmentBloom();
        return new SegmentSummary(name, index, r.header(), r.fileSize(), 0, events, min, max,
                seg == null ? null : seg.serialize(), Arrays.copyOfRange(region, 8, region.length),
                r.blockBlooms().bloomSizeBytes(), names, masks, null);
    }

    private static ByteBuffer map(Path p) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        }
    }

    @Test
    void mappedAndHeapSummariesPlanTheSameBytes() throws IOException {
        Random rnd = new Random(21);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(24, 6_000, Duration.ZERO))) {
            for (long seq = 1; seq <= 3_000; seq++) {
                int kind = rnd.nextInt(10) < 8 ? 1 + rnd.nextInt(3) : 4 + rnd.nextInt(3);
                byte[] coll = kind <= 3 ? COLLECTIONS[rnd.nextInt(COLLECTIONS.length)].getBytes(StandardCharsets.UTF_8) : null;
                byte[] d = did(rnd.nextInt(400)).getBytes(StandardCharsets.UTF_8);
                w.append(seq, 1_700_000_000_000_000L + seq, 0, kind, d, coll, kind <= 3 ? "3kaaaaaaaaaa2".getBytes() : null,
                        "3kaaaaaaaaaa2".getBytes(), kind == 3 ? null : new byte[] {(byte) 0xa0});
            }
            w.seal();
        }
        List<SegmentName.Entry> files = SegmentName.scan(dir);
        assertTrue(files.size() > 5, "several segments: " + files.size());
        // Damage one block bloom of one segment (past its framing): both summaries must answer "maybe" for it.
        Path damaged = files.get(1).path();
        SegmentReader dr = SegmentReader.open(damaged);
        int at = (int) dr.header().blockDidBloomOffset() + 8 + 40;
        byte[] bytes = Files.readAllBytes(damaged);
        bytes[at] ^= 0x5a;
        Files.write(damaged, bytes);
        List<SegmentSummary> heap = new ArrayList<>();
        List<SegmentSummary> mapped = new ArrayList<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : files) {
                String name = e.path().getFileName().toString();
                ByteBuffer m = map(e.path());
                heap.add(heapCopy(SegmentReader.open(m, false), name, e.index()));
                mapped.add(SegmentSummary.open(m, name, e.index(), 0, zstd));
            }
        }
        GloomFilter.Probe absent = GloomFilter.Probe.of("did:plc:never-written".getBytes(StandardCharsets.UTF_8));
        assertTrue(heap.get(1).blockMightContain(0, absent) && mapped.get(1).blockMightContain(0, absent),
                "a damaged bloom answers maybe");
        assertTrue(!mapped.get(1).blockMightContain(1, absent) || !mapped.get(1).blockMightContain(2, absent),
                "intact blooms still reject");
        Manifest a = Manifest.of(heap);
        Manifest b = Manifest.of(mapped);
        assertEquals(a.residentBloomBytes(), b.residentBloomBytes());
        long tip = a.sealedTipSeq();
        int planned = 0;
        for (int c = 0; c < 400; c++) {
            List<String> dids = new ArrayList<>();
            for (int i = rnd.nextInt(4); i > 0; i--) {
                dids.add(did(rnd.nextInt(500)));
            }
            List<String> colls = new ArrayList<>();
            for (int i = rnd.nextInt(3); i > 0; i--) {
                colls.add(PATTERNS[rnd.nextInt(PATTERNS.length)]);
            }
            List<String> kinds = rnd.nextBoolean() ? null : colls.isEmpty() ? List.of(KINDS[rnd.nextInt(KINDS.length)]) : List.of("commit", KINDS[rnd.nextInt(KINDS.length)]);
            long after = rnd.nextInt((int) tip);
            PlanLimits limits = new PlanLimits(10_000, 100, rnd.nextInt(4) * 3, 0.75);
            PlanFilter f = PlanFilter.parse(kinds, dids.isEmpty() ? null : dids, colls.isEmpty() ? null : colls, after,
                    null, limits);
            byte[] want = PlanJson.write(SnapshotPlanner.plan(a, f, limits)).toByteArray();
            byte[] got = PlanJson.write(SnapshotPlanner.plan(b, f, limits)).toByteArray();
            assertArrayEquals(want, got, "filter " + c + ": " + new String(want, StandardCharsets.UTF_8));
            planned += want.length;
        }
        assertTrue(planned > 400 * 60, "plans were not all empty");
    }
}
