package jetstream.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentLimits;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.ActiveSegment;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentSealer;
import jetstream.segment.io.SegmentWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A full 256 MiB segment through the production writer: {@link #writeAndSeal} appends realistic rows
 * (4096 per block, zstd level 3, one fsync per block) until the size rotation seals the file;
 * {@link #sealOnly} seals a <em>resumed</em> active file (the path after a restart: the resume, untimed,
 * decoded every frame and, since [P3], fed the footer builder with them, so the seal no longer re-reads
 * the file; before, it re-read and decoded every frame); {@link #resumeAndSeal} times both steps of that
 * path; {@link #sealFed} seals the file
 * its writer has just written, from the footer the writer fed block by block (the production path:
 * only the footer's assembly, two writes and two fsyncs are timed); {@link #floorWriteFsync} writes
 * the same sealed bytes sequentially and fsyncs once — the disk's floor for producing that file — and
 * {@link #floorFooterFsync} does only the fed seal's I/O (footer write + fsync, header write + fsync),
 * the floor of the seal step alone. {@code bench/run} prints {@code RESULT seal_256mib_ms} ({@code sealOnly}),
 * {@code seal_fed_256mib_ms}, {@code resume_seal_256mib_ms} and {@code write_seal_256mib_ms} against
 * {@code floorWriteFsync}, and {@code seal_fed_vs_footer_io_ms} against {@code floorFooterFsync}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g"})
public class SealBench {
    private static final int POOL = 65_536;
    private static final String[] WORDS = ("the a to of and in is it you that for on was with this my be at have "
            + "just not are so but like what all about out one up if me can your now get will new time day people "
            + "love good today think know see really back want more first make great thanks bluesky post art world "
            + "going still much here way could even any been after over well only year night work feel into").split(" ");

    private Path root;
    private byte[][] dids;
    private byte[][] collections;
    private byte[][] rkeys;
    private byte[][] revs;
    private byte[][] payloads;
    private int[] kinds;
    private byte[] sealedImage;
    private byte[] activeImage;

    @Setup(Level.Trial)
    public void setup() throws IOException {
        root = Files.createTempDirectory("sealbench");
        generateRows();
        Path dir = Files.createDirectory(root.resolve("image"));
        Path sealed = writeOneSegment(dir);
        sealedImage = Files.readAllBytes(sealed);
        long footerOffset = SegmentHeader.parseSealed(sealedImage, 0).footerOffset();
        activeImage = new byte[(int) footerOffset];
        System.arraycopy(sealedImage, 0, activeImage, 0, activeImage.length);
        System.arraycopy(SegmentHeader.activeHeaderBytes(), 0, activeImage, 0, SegmentLimits.HEADER_SIZE);
        deleteTree(dir);
        System.out.printf("%nsegment: %d bytes sealed, %d bytes of blocks%n", sealedImage.length, footerOffset);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        deleteTree(root);
    }

    /** Rows shaped like the network's: mostly likes, posts with text, follows and reposts, some identity/account. */
    private void generateRows() {
        SplittableRandom r = new SplittableRandom(42);
        dids = new byte[POOL][];
        collections = new byte[POOL][];
        rkeys = new byte[POOL][];
        revs = new byte[POOL][];
        payloads = new byte[POOL][];
        kinds = new int[POOL];
        for (int i = 0; i < POOL; i++) {
            String did = "did:plc:" + base32(r, 24);
            dids[i] = did.getBytes(StandardCharsets.US_ASCII);
            int dice = r.nextInt(100);
            String collection;
            if (dice < 2) {
                kinds[i] = dice == 0 ? 4 : 5;
                collection = null;
            } else {
                kinds[i] = dice < 5 ? 3 : 1;
                collection = dice < 50 ? "app.bsky.feed.like" : dice < 72 ? "app.bsky.feed.post"
                        : dice < 85 ? "app.bsky.graph.follow" : dice < 97 ? "app.bsky.feed.repost" : "app.bsky.actor.profile";
            }
            collections[i] = collection == null ? null : collection.getBytes(StandardCharsets.US_ASCII);
            rkeys[i] = collection == null ? null : ("3l" + base32(r, 11)).getBytes(StandardCharsets.US_ASCII);
            revs[i] = kinds[i] >= 4 ? null : ("3l" + base32(r, 11)).getBytes(StandardCharsets.US_ASCII);
            payloads[i] = kinds[i] == 3 ? null : payload(r, collection, did);
        }
    }

    private static String base32(SplittableRandom r, int n) {
        StringBuilder b = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            b.append("abcdefghijklmnopqrstuvwxyz234567".charAt(r.nextInt(32)));
        }
        return b.toString();
    }

    /** A DAG-CBOR-like record: map keys and strings as text, CIDs as 36 random bytes. */
    private static byte[] payload(SplittableRandom r, String collection, String did) {
        StringBuilder s = new StringBuilder();
        s.append("\u00a4e$type").append(collection == null ? "#identity" : collection);
        s.append("icreatedAtx\u00182025-0").append(1 + r.nextInt(9)).append("-1").append(r.nextInt(10))
                .append("T1").append(r.nextInt(10)).append(":2").append(r.nextInt(10)).append(":00.000Z");
        ByteBuffer cid = ByteBuffer.allocate(36);
        for (int i = 0; i < 36; i++) {
            cid.put((byte) r.nextInt(256));
        }
        if (collection != null && (collection.endsWith("like") || collection.endsWith("repost"))) {
            s.append("gsubject\u00a2ccid");
            s.append("curix\u0046at://did:plc:").append(base32(r, 24)).append("/app.bsky.feed.post/3l").append(base32(r, 11));
        } else if (collection != null && collection.endsWith("post")) {
            s.append("dtext");
            int words = 3 + r.nextInt(40);
            for (int w = 0; w < words; w++) {
                s.append(WORDS[r.nextInt(WORDS.length)]).append(' ');
            }
            s.append("elangs\u0081ben");
        } else if (collection != null && collection.endsWith("follow")) {
            s.append("gsubjectx ").append("did:plc:").append(base32(r, 24));
        } else {
            s.append("cdid").append(did).append("fhandle").append(base32(r, 8)).append(".bsky.social");
        }
        byte[] text = s.toString().getBytes(StandardCharsets.UTF_8);
        boolean withCid = collection != null && (collection.endsWith("like") || collection.endsWith("repost"));
        byte[] out = new byte[text.length + (withCid ? 36 : 0)];
        System.arraycopy(text, 0, out, 0, text.length);
        if (withCid) {
            System.arraycopy(cid.array(), 0, out, text.length, 36);
        }
        return out;
    }

    /** Appends rows with production defaults until the size rotation seals segment 0; returns it. */
    private Path writeOneSegment(Path dir) {
        boolean[] sealed = new boolean[1];
        SegmentWriter w = SegmentWriter.open(SegmentIO.PRODUCTION, dir,
                new SegmentWriter.Config(SegmentLimits.DEFAULT_EVENTS_PER_BLOCK, SegmentLimits.DEFAULT_MAX_SEGMENT_BYTES,
                        Duration.ZERO),
                System::nanoTime, new SegmentWriter.Listener() {
                    @Override
                    public void sealed(Path file, SegmentSealer.Result result) {
                        sealed[0] = true;
                    }
                });
        long seq = 1;
        while (!sealed[0]) {
            int i = (int) (seq % POOL);
            w.append(seq, 1_750_000_000_000_000L + seq * 37, 0, kinds[i], dids[i], collections[i], rkeys[i], revs[i],
                    payloads[i]);
            seq++;
        }
        try {
            w.close();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return dir.resolve(SegmentName.format(0));
    }

    private Path freshDir() throws IOException {
        Path d = root.resolve("run");
        deleteTree(d);
        return Files.createDirectory(d);
    }

    /**
     * A fresh copy of the active (unsealed) image for each {@link #sealOnly} call, already resumed
     * (its frames walked and decoded once, as the writer has them open); none of this is timed.
     */
    @State(Scope.Benchmark)
    public static class ActiveCopy {
        ActiveSegment segment;
        ZstdFrames zstd;

        @Setup(Level.Invocation)
        public void copy(SealBench bench) throws IOException {
            Path file = bench.freshDir().resolve(SegmentName.format(0));
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(bench.activeImage);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            zstd = new ZstdFrames();
            segment = ActiveSegment.resume(SegmentIO.PRODUCTION, file, zstd);
        }

        @TearDown(Level.Invocation)
        public void close() throws IOException {
            segment.close();
            zstd.close();
        }
    }

    /**
     * Appends the blocks of the benchmark's segment to a fresh active file through {@link
     * ActiveSegment#appendBlock} (each block re-encoded from the sealed image's rows, compressed, written
     * and fsynced, and fed to the file's footer builder, as the writer does), so the file holds exactly
     * the bytes {@link #writeOneSegment} wrote. None of this is timed.
     */
    void appendBlocks(ActiveSegment segment, ZstdFrames zstd) {
        long footerOffset = SegmentHeader.parseSealed(sealedImage, 0).footerOffset();
        ByteBuffer le = ByteBuffer.wrap(sealedImage).order(ByteOrder.LITTLE_ENDIAN);
        BlockBuilder rows = new BlockBuilder(SegmentLimits.DEFAULT_EVENTS_PER_BLOCK);
        BlockView view = new BlockView();
        for (long at = SegmentLimits.HEADER_SIZE; at < footerOffset; ) {
            int frameLen = (int) le.getLong((int) at);
            int frameAt = (int) at + SegmentLimits.FRAME_PREFIX_SIZE;
            byte[] body = zstd.decompress(sealedImage, frameAt, frameLen);
            view.decode(body, 0, body.length);
            rows.reset();
            for (int i = 0; i < view.size(); i++) {
                rows.add(view, i);
            }
            segment.appendBlock(rows, zstd);
            at = frameAt + (long) frameLen;
        }
    }

    /**
     * A fresh active file written block by block by {@link #appendBlocks} for each {@link #sealFed}
     * call (untimed); the seal then has its footer builder fed with every block.
     */
    @State(Scope.Benchmark)
    public static class FedActive {
        ActiveSegment segment;
        ZstdFrames zstd;
        private Path file;
        private long expectedSize;

        @Setup(Level.Invocation)
        public void write(SealBench bench) throws IOException {
            file = bench.freshDir().resolve(SegmentName.format(0));
            expectedSize = bench.sealedImage.length;
            zstd = new ZstdFrames();
            segment = ActiveSegment.create(SegmentIO.PRODUCTION, file);
            bench.appendBlocks(segment, zstd);
        }

        @TearDown(Level.Invocation)
        public void check() throws IOException {
            segment.close();
            zstd.close();
            // the fed path must have sealed the same segment the writer produced in setup
            if (Files.size(file) != expectedSize) {
                throw new IllegalStateException("fed seal wrote " + Files.size(file) + " bytes, not " + expectedSize);
            }
        }
    }

    @Benchmark
    @Floor(value = "floorWriteFsync", metric = "seal_fed_256mib_ms")
    @Floor(value = "floorFooterFsync", metric = "seal_fed_vs_footer_io_ms")
    public long sealFed(FedActive active) {
        return SegmentSealer.seal(active.segment, active.zstd).fileSize();
    }

    @Benchmark
    @Floor(value = "floorWriteFsync", metric = "write_seal_256mib_ms")
    public long writeAndSeal() throws IOException {
        Path d = freshDir();
        return Files.size(writeOneSegment(d));
    }

    @Benchmark
    @Floor(value = "floorWriteFsync", metric = "seal_256mib_ms")
    public long sealOnly(ActiveCopy active) {
        return SegmentSealer.seal(active.segment, active.zstd).fileSize();
    }

    /** The whole restart path: resume a fresh copy of the active image (walk, decode every frame), then seal it. */
    @Benchmark
    @Floor(value = "floorWriteFsync", metric = "resume_seal_256mib_ms")
    public long resumeAndSeal(FooterFloor copy) {
        try (ZstdFrames zstd = new ZstdFrames()) {
            return SegmentSealer.seal(ActiveSegment.resume(SegmentIO.PRODUCTION, copy.file, zstd), zstd).fileSize();
        }
    }

    @Benchmark
    public long floorWriteFsync() throws IOException {
        Path f = freshDir().resolve("floor.jss");
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(sealedImage);
            long pos = 0;
            while (b.hasRemaining()) {
                pos += ch.write(b, pos);
            }
            ch.force(true);
            return pos;
        }
    }

    /**
     * The fed seal's own floor: the I/O that seal does and nothing else — the same footer bytes written
     * at the same offset and fsynced, then the 256-byte header at offset 0 and fsynced — into a fresh
     * copy of the active file (its blocks already on disk, as when the writer seals).
     */
    @Benchmark
    public long floorFooterFsync(FooterFloor f) throws IOException {
        try (FileChannel ch = FileChannel.open(f.file, StandardOpenOption.WRITE)) {
            long footerOffset = activeImage.length;
            ByteBuffer footer = ByteBuffer.wrap(sealedImage, (int) footerOffset, sealedImage.length - (int) footerOffset);
            for (long pos = footerOffset; footer.hasRemaining(); ) {
                pos += ch.write(footer, pos);
            }
            ch.force(true);
            ByteBuffer header = ByteBuffer.wrap(sealedImage, 0, SegmentLimits.HEADER_SIZE);
            for (long pos = 0; header.hasRemaining(); ) {
                pos += ch.write(header, pos);
            }
            ch.force(true);
            return ch.size();
        }
    }

    /** A fresh, fsynced copy of the active image for each {@link #floorFooterFsync} and {@link #resumeAndSeal} call (untimed). */
    @State(Scope.Benchmark)
    public static class FooterFloor {
        Path file;

        @Setup(Level.Invocation)
        public void copy(SealBench bench) throws IOException {
            file = bench.freshDir().resolve(SegmentName.format(0));
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(bench.activeImage);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }
}
