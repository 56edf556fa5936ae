package jetstream.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.SplittableRandom;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import jetstream.segment.io.SegmentWriter;

/**
 * Compaction rewrite throughput against the raw zstd floor. One sealed segment of realistic rows
 * (4096 per block, level 3) is rewritten by {@link SegmentRewriter#compact} dropping every 20th
 * create, so every block is re-encoded (the worst case; untouched blocks are copied verbatim), tmp +
 * fsync + rename + directory fsync included. The floor decompresses and recompresses the same
 * frames in memory. Both are reported as MB/s of the input file. Args: target MiB (default 64), runs (3).
 */
public final class CompactionRewriteBench {
    private static final String[] WORDS = ("the a to of and in is it you that for on was with this my be at have "
            + "just not are so but like what all about out one up if me can your now get will new time day people "
            + "love good today think know see really back want more first make great thanks bluesky post art world").split(" ");

    public static void main(String[] args) throws Exception {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 64;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Path dir = Files.createTempDirectory("compaction-bench");
        Path original = build(dir.resolve("w"), mib << 20);
        long size = Files.size(original);
        SegmentReader r = SegmentReader.open(original);
        System.out.printf("segment: %.1f MiB, %d blocks, %d rows%n", size / 1048576.0, r.blockCount(), r.header().eventCount());
        for (int run = 0; run < runs; run++) {
            long t0 = System.nanoTime();
            long sink = 0;
            try (ZstdFrames z = new ZstdFrames()) {
                for (int b = 0; b < r.blockCount(); b++) {
                    BlockIndexEntry e = r.entry(b);
                    byte[] frame = r.frameBytes(b);
                    byte[] body = z.decompress(frame, 0, frame.length);
                    sink += z.compress(body, 0, body.length).length + e.eventCount();
                }
            }
            double floor = size / 1e6 / ((System.nanoTime() - t0) / 1e9);
            Path copy = dir.resolve("seg_0000000001.jss");
            Files.copy(original, copy, StandardCopyOption.REPLACE_EXISTING);
            long t1 = System.nanoTime();
            SegmentRewriter.Result res = SegmentRewriter.compact(SegmentIO.PRODUCTION, copy,
                    (v, i) -> v.kindCode(i) != 1 || v.seq(i) % 20 != 0);
            double rewrite = size / 1e6 / ((System.nanoTime() - t1) / 1e9);
            System.out.printf("run %d: rewrite %.1f MB/s (%d rows dropped, %d blocks re-encoded), zstd floor %.1f MB/s,"
                    + " ratio %.2f (sink %d)%n", run, rewrite, res.rowsChanged(), res.blocksReencoded(), floor,
                    rewrite / floor, sink);
        }
    }

    private static Path build(Path dir, long bytes) throws Exception {
        Files.createDirectories(dir);
        SplittableRandom rnd = new SplittableRandom(42);
        byte[] rev = "3lrevabcdefgh".getBytes(StandardCharsets.US_ASCII);
        byte[] coll = "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4096, 1L << 40, Duration.ZERO))) {
            long seq = 1;
            while (w.active().blockBytes() < bytes) {
                StringBuilder text = new StringBuilder("{\"$type\":\"app.bsky.feed.post\",\"text\":\"");
                for (int i = 3 + rnd.nextInt(30); i > 0; i--) {
                    text.append(WORDS[rnd.nextInt(WORDS.length)]).append(' ');
                }
                text.append("\",\"createdAt\":\"2026-12-02T18:00:00.").append(rnd.nextInt(1000)).append("Z\"}");
                byte[] did = ("did:plc:" + Long.toString(rnd.nextLong(1L << 50), 36)).getBytes(StandardCharsets.US_ASCII);
                int kind = rnd.nextInt(10) == 0 ? 3 : 1;
                w.append(seq, 1_790_000_000_000_000L + seq, 0, kind, did, coll,
                        ("3k" + Long.toString(seq, 32)).getBytes(StandardCharsets.US_ASCII), rev,
                        kind == 3 ? null : text.toString().getBytes(StandardCharsets.UTF_8));
                seq++;
            }
            return w.seal().path();
        }
    }
}
