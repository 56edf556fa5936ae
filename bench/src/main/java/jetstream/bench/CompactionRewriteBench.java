package jetstream.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;
import jetstream.segment.FooterTail;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.SegmentVerifier;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.ResultLine;

/**
 * Compaction rewrite cost against the codec floor, three measurements per run on the same sealed
 * segment (4096 rows per block, level 3, post-like rows, DIDs drawn with a heavy head from 200,000
 * accounts, 10 % deletes):
 * <ul>
 *   <li>floor: decompress + recompress every frame in memory;
 *   <li>worst case: every 20th create dropped in every block, so every block is decoded and re-encoded;
 *   <li>typical pass: every 20th create of the 2,000 most active accounts (a fifth of the rows, so
 *       each has rows in many blocks and none leaves the segment) dropped in every 20th block (5 % of blocks); the other
 *       blocks are ruled out by the caller (as the compactor's footer narrowing does) and copied unread;
 *   <li>typical pass where DIDs leave: every 20th create of any account in those blocks, so some
 *       accounts lose their only rows and the segment bloom must be rebuilt from every DID (the DID
 *       census says which DIDs left and holds the probes of the rest: no unread block is read);
 *   <li>the same pass over the segment without its DID census (an older or Go-written file, and the
 *       code before the census): every unread block's DID column is read.
 * </ul>
 * Rewrites include the original's checksum check, tmp write, fsync, rename and directory fsync.
 * Prints {@code RESULT compaction_worst_ms} (floor = the floor above, target ratio ≤ 2),
 * {@code RESULT compaction_typical_ms}, {@code RESULT compaction_typical_leaving_ms} and
 * {@code RESULT compaction_typical_leaving_nocensus_ms} (floor = the worst case: ratio = that pass / worst, target
 * ≤ 0.1, i.e. ≥ 10× faster), then the same four as thread CPU time ({@code _cpu_ms}).
 * Args: target MiB (default 64), runs (3).
 */
public final class CompactionRewriteBench {
    private static final String[] WORDS = ("the a to of and in is it you that for on was with this my be at have "
            + "just not are so but like what all about out one up if me can your now get will new time day people "
            + "love good today think know see really back want more first make great thanks bluesky post art world").split(" ");
    private static final int TYPICAL_EVERY = 20;

    public static void main(String[] args) throws Exception {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 64;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Path dir = Files.createTempDirectory("compaction-bench");
        Path original = build(dir.resolve("w"), mib << 20);
        long size = Files.size(original);
        SegmentReader r = SegmentReader.open(original);
        int blocks = r.blockCount();
        System.out.printf("segment: %.1f MiB, %d blocks, %d rows, %d distinct DIDs%n", size / 1048576.0, blocks,
                r.header().eventCount(), r.header().uniqueDidCount());
        Path noCensus = dir.resolve("no-census.jss");
        long censusBytes = withoutCensus(original, noCensus);
        System.out.printf("DID census: %d bytes, %.1f per distinct DID, %.2f %% of the file%n", censusBytes,
                (double) censusBytes / r.header().uniqueDidCount(), 100.0 * censusBytes / size);
        Path copy = dir.resolve("seg_0000000001.jss");
        for (int run = 0; run < runs; run++) {
            java.lang.management.ThreadMXBean cpuClock = java.lang.management.ManagementFactory.getThreadMXBean();
            long c0 = cpuClock.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            long sink = 0;
            try (ZstdFrames z = new ZstdFrames()) {
                for (int b = 0; b < blocks; b++) {
                    byte[] frame = r.frameBytes(b);
                    byte[] body = z.decompress(frame, 0, frame.length);
                    sink += z.compress(body, 0, body.length).length;
                }
            }
            double floorMs = (System.nanoTime() - t0) / 1e6;
            double floorCpuMs = (cpuClock.getCurrentThreadCpuTime() - c0) / 1e6;
            String[] names = {"worst", "typical", "typical_leaving", "typical_leaving_nocensus"};
            SegmentRewriter.Result[] res = new SegmentRewriter.Result[4];
            double[] ms = new double[4];
            double[] cpuMs = new double[4];
            for (int mode = 0; mode < 4; mode++) {
                Files.copy(mode == 3 ? noCensus : original, copy, StandardCopyOption.REPLACE_EXISTING);
                IntPredicate dropsIn = mode == 0 ? b -> true : b -> b % TYPICAL_EVERY == TYPICAL_EVERY / 2;
                boolean headOnly = mode == 1;
                long c1 = cpuClock.getCurrentThreadCpuTime();
                long t1 = System.nanoTime();
                res[mode] = SegmentRewriter.compact(SegmentIO.PRODUCTION, copy, dropsIn,
                        (v, i) -> v.kindCode(i) != 1 || v.seq(i) % 20 != 0
                                || !dropsIn.test((int) ((v.seq(0) - 1) / 4096))
                                || headOnly && v.buffer()[v.didOffset(i) + 8] != 'h');
                ms[mode] = (System.nanoTime() - t1) / 1e6;
                cpuMs[mode] = (cpuClock.getCurrentThreadCpuTime() - c1) / 1e6;
                if (!SegmentVerifier.verify(copy).ok()) {
                    throw new IllegalStateException("compacted segment does not verify");
                }
            }
            StringBuilder line = new StringBuilder(String.format("run %d: floor %.0f ms (CPU %.0f ms)", run, floorMs, floorCpuMs));
            for (int mode = 0; mode < 4; mode++) {
                line.append(String.format("; %s %.0f ms (CPU %.0f ms; %d rows dropped, %d/%d blocks re-encoded, %d decoded)",
                        names[mode], ms[mode], cpuMs[mode], res[mode].rowsChanged(), res[mode].blocksReencoded(), blocks,
                        res[mode].blocksDecoded()));
            }
            System.out.println(line + " (sink " + sink + ")");
            String[] metrics = {"compaction_worst", "compaction_typical", "compaction_typical_leaving",
                    "compaction_typical_leaving_nocensus"};
            for (int mode = 0; mode < 4; mode++) {
                ResultLine.print(metrics[mode] + "_ms", ms[mode], mode == 0 ? floorMs : ms[0]);
            }
            // thread CPU time: on a loaded box the wall times above are mostly waiting for a core
            for (int mode = 0; mode < 4; mode++) {
                ResultLine.print(metrics[mode] + "_cpu_ms", cpuMs[mode], mode == 0 ? floorCpuMs : cpuMs[0]);
            }
        }
    }

    /**
     * Writes {@code from} without its DID census to {@code to} (the census cut from the end of the
     * footer, the checksum recomputed) and returns the census bytes.
     */
    private static long withoutCensus(Path from, Path to) throws Exception {
        byte[] file = Files.readAllBytes(from);
        SegmentHeader h = SegmentHeader.parseSealed(file, 0).withChecksum(0);
        FooterTail tail = FooterTail.find(ByteBuffer.wrap(file), (int) h.collectionIndexOffset(), file.length);
        if (tail.censusAt() < 0) {
            throw new IllegalStateException("the seal wrote no DID census");
        }
        byte[] cut = Arrays.copyOf(file, tail.censusAt());
        int footerAt = (int) h.footerOffset();
        long checksum = SegmentHeader.computeChecksum(h.toBytes(), cut, footerAt, cut.length - footerAt);
        System.arraycopy(h.withChecksum(checksum).toBytes(), 0, cut, 0, SegmentHeader.SIZE);
        Files.write(to, cut);
        return tail.censusLength();
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
                double u = rnd.nextDouble();
                long account = (long) (200_000 * u * u * u);
                // 'h' marks the 2,000 most active accounts (a fifth of the rows)
                byte[] did = ("did:plc:" + (account < 2000 ? 'h' : 't') + Long.toString(1_000_000_000L + account * 7919, 36))
                        .getBytes(StandardCharsets.US_ASCII);
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
