package jetstream.ingester.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import jetstream.feed.FeedAuth;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.FeedTls;
import jetstream.feed.Vacancy;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.writer.ReadableLog;
import jetstream.replay.ActiveBlockSource;
import jetstream.replay.BlockCache;
import jetstream.replay.FeedActiveBlocks;
import jetstream.segment.BlockView;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("component")
class FeedTcpServerTest {
    private static final byte[] SECRET = "a-feed-secret-of-32-bytes-length".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final IngestMetrics metrics = new IngestMetrics(registry);
    private final List<AutoCloseable> closing = new ArrayList<>();
    private FeedTcpServer tcp;
    private FeedServer unix;
    private ReadableLog log;
    /** What the next {@link #open} answers READ_ACTIVE from; null refuses it. */
    private ActiveBlockSource active;

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private void open(long budget, javax.net.ssl.SSLContext tls, int maxReaders) throws IOException {
        FeedServer[] u = new FeedServer[1];
        log = new ReadableLog(budget, 1, () -> {
            if (u[0] != null) {
                u[0].wake();
            }
        });
        unix = new FeedServer(dir.resolve("run/feed.sock"), log, metrics);
        u[0] = unix;
        unix.start(e -> { });
        closing.add(unix);
        tcp = new FeedTcpServer(new FeedTcpServer.Config("127.0.0.1", 0, SECRET, tls, maxReaders, Duration.ofSeconds(5)),
                log, metrics, active);
        unix.alsoWake(tcp::wake);
        tcp.start(e -> { });
        closing.add(tcp);
    }

    private static byte[] event(long seq, int payloadBytes) {
        byte[] d = ("did:plc:reader" + (seq % 7)).getBytes(StandardCharsets.UTF_8);
        byte[] c = "app.bsky.feed.post".getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[payloadBytes];
        payload[0] = (byte) seq;
        return FeedCodec.encodeEvent(seq, seq * 10, 0, 1, d, 0, d.length, c, 0, c.length, new byte[] {'k'}, 0, 1,
                new byte[0], 0, 0, payload, 0, payload.length);
    }

    private double refused(String reason) {
        Counter c = registry.find("jetstream_feed_auth_refused_total").tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    private static void await(BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(done.getAsBoolean(), "timed out");
    }

    /** Frames other than heartbeats until the event {@code lastSeq} arrived. */
    private static List<FeedFrame> collect(FeedClient.Subscription sub, long lastSeq) throws InterruptedException {
        List<FeedFrame> out = new ArrayList<>();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            FeedFrame f = sub.poll(Duration.ofMillis(200));
            if (f == null || f instanceof FeedFrame.Heartbeat) {
                continue;
            }
            out.add(f);
            if (f instanceof FeedFrame.Event e && e.seq() == lastSeq) {
                return out;
            }
        }
        throw new AssertionError("event " + lastSeq + " never arrived; got " + out.size() + " frames");
    }

    private FeedClient.Remote remote(byte[] secret, javax.net.ssl.SSLContext tls) {
        return new FeedClient.Remote("127.0.0.1", tcp.port(), secret, tls);
    }

    /** A raw connection: the challenge nonce read, nothing sent yet. */
    private byte[] challenge(Socket s) throws IOException {
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        byte[] frame = in.readNBytes(FeedCodec.LENGTH_PREFIX + 1 + FeedAuth.NONCE_BYTES);
        FeedFrame f = FeedCodec.decode(frame, FeedCodec.LENGTH_PREFIX, frame.length - FeedCodec.LENGTH_PREFIX);
        return assertInstanceOf(FeedFrame.AuthChallenge.class, f).nonce();
    }

    /** The server sends nothing more and closes (a reset is a close too: it may drop our unread bytes). */
    private static void assertClosedWithNothingSent(Socket s) {
        try {
            assertEquals(-1, s.getInputStream().read(), "a refused reader got data after the challenge");
        } catch (IOException reset) {
            // closed with our subscribe unread: the kernel answers with a reset
        }
    }

    private static void send(Socket s, FeedFrame... frames) throws IOException {
        OutputStream out = s.getOutputStream();
        for (FeedFrame f : frames) {
            out.write(FeedCodec.encode(f));
        }
        out.flush();
    }

    @Test
    void tcpReadersSeeExactlyTheFramesOfTheUnixFeed() throws Exception {
        open(64 << 20, null, 8);
        for (long s = 1; s <= 300; s++) {
            log.appendEvent(s, event(s, 200));
        }
        log.advanceDurable(300);
        log.registerVacancy(new Vacancy(301, 311, Vacancy.Reason.ABANDONED_LEASE));
        try (FeedClient.Subscription viaUnix = FeedClient.subscribe(FeedClient.Options.defaults(unix.socket()), 1, 4096);
             FeedClient.Subscription viaTcp = FeedClient.subscribe(FeedClient.Options.remote(remote(SECRET, null)), 1,
                     4096)) {
            // live appends after both subscribed (same snapshot), so the snapshot and the live path are compared
            await(() -> viaUnix.client().connections() == 1 && viaTcp.client().connections() == 1);
            for (long s = 311; s <= 600; s++) {
                log.appendEvent(s, event(s, 3000));
            }
            log.advanceDurable(600);
            List<FeedFrame> a = collect(viaUnix, 600);
            List<FeedFrame> b = collect(viaTcp, 600);
            for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
                assertEquals(a.get(i), b.get(i), "frame " + i);
            }
            assertEquals(a.size(), b.size());
            assertEquals(590, b.stream().filter(f -> f instanceof FeedFrame.Event).count());
        }
        assertEquals(0, refused("bad_secret") + refused("no_secret"));
    }

    @Test
    void wrongSecretIsRefusedAndCountedBeforeAnyFrame() throws Exception {
        open(1 << 20, null, 8);
        log.appendEvent(1, event(1, 10));
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            byte[] nonce = challenge(s);
            byte[] wrong = "another-secret-of-32-bytes-long!".getBytes(StandardCharsets.UTF_8);
            send(s, new FeedFrame.Auth(FeedAuth.mac(wrong, nonce)), new FeedFrame.Subscribe(1));
            assertClosedWithNothingSent(s);
        }
        await(() -> refused("bad_secret") == 1);
        // and through the client: it never gets subscribed
        byte[] wrong = "another-secret-of-32-bytes-long!".getBytes(StandardCharsets.UTF_8);
        try (FeedClient.Subscription sub = FeedClient.subscribe(FeedClient.Options.remote(remote(wrong, null)), 1, 16)) {
            await(() -> refused("bad_secret") >= 2);
            assertEquals(null, sub.poll(Duration.ofMillis(200)));
            assertEquals(0, sub.client().connections());
        }
    }

    @Test
    void noSecretIsRefusedAndCounted() throws Exception {
        open(1 << 20, null, 8);
        log.appendEvent(1, event(1, 10));
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            challenge(s);
            send(s, new FeedFrame.Subscribe(1));
            assertClosedWithNothingSent(s);
        }
        await(() -> refused("no_secret") == 1);
    }

    @Test
    void aReplayedHandshakeIsRefused() throws Exception {
        open(1 << 20, null, 8);
        log.appendEvent(1, event(1, 10));
        byte[] recorded;
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            byte[] nonce = challenge(s);
            recorded = FeedAuth.mac(SECRET, nonce);
            send(s, new FeedFrame.Auth(recorded), new FeedFrame.Subscribe(1));
            InputStream in = s.getInputStream();
            byte[] head = in.readNBytes(4);
            byte[] body = in.readNBytes(FeedCodec.contentLength(head, 0));
            assertInstanceOf(FeedFrame.Subscribed.class, FeedCodec.decode(body, 0, body.length));
        }
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            byte[] nonce = challenge(s);
            assertFalse(java.util.Arrays.equals(FeedAuth.mac(SECRET, nonce), recorded), "nonces repeat");
            send(s, new FeedFrame.Auth(recorded), new FeedFrame.Subscribe(1));
            assertClosedWithNothingSent(s);
        }
        await(() -> refused("bad_secret") == 1);
    }

    @Test
    void anOversizeFrameIsRefusedBeforeItIsRead() throws Exception {
        open(1 << 20, null, 8);
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            challenge(s);
            // announces 16 MiB; the server must refuse on the prefix, not wait for (or allocate) the body
            s.getOutputStream().write(new byte[] {0x01, 0x00, 0x00, 0x00, FeedFrame.AUTH});
            s.getOutputStream().flush();
            assertClosedWithNothingSent(s);
        }
        await(() -> refused("oversize") == 1);
    }

    @Test
    void readersBeyondTheCapAreRefused() throws Exception {
        open(1 << 20, null, 1);
        try (Socket first = new Socket("127.0.0.1", tcp.port())) {
            challenge(first);
            try (Socket second = new Socket("127.0.0.1", tcp.port())) {
                second.setSoTimeout(10_000);
                assertClosedWithNothingSent(second);
            }
            await(() -> refused("too_many_readers") == 1);
        }
    }

    @Test
    void tlsFeedFromPemFiles() throws Exception {
        SelfSignedPem pem = SelfSignedPem.create(dir);
        open(64 << 20, FeedTls.server(pem.cert(), pem.key()), 8);
        for (long s = 1; s <= 50; s++) {
            log.appendEvent(s, event(s, 500));
        }
        log.advanceDurable(50);
        try (FeedClient.Subscription sub = FeedClient.subscribe(
                FeedClient.Options.remote(remote(SECRET, FeedTls.client(pem.cert()))), 1, 1024)) {
            for (long s = 51; s <= 100; s++) {
                log.appendEvent(s, event(s, 500));
            }
            List<FeedFrame> frames = collect(sub, 100);
            List<Long> seqs = new ArrayList<>();
            for (FeedFrame f : frames) {
                if (f instanceof FeedFrame.Event e) {
                    seqs.add(e.seq());
                    assertEquals(event(e.seq(), 500).length, FeedCodec.encode(e).length);
                }
            }
            assertEquals(100, seqs.size());
            assertEquals(1L, seqs.get(0));
            assertEquals(100L, seqs.get(99));
        }
        // a plain-TCP reader cannot talk to the TLS listener: a TLS alert at most, no feed frame, counted
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            s.setSoTimeout(10_000);
            send(s, new FeedFrame.Subscribe(1));
            byte[] answer;
            try {
                answer = s.getInputStream().readAllBytes();
            } catch (IOException reset) {
                answer = new byte[0];
            }
            assertTrue(answer.length == 0 || answer[0] == 21, "not a TLS alert: the first byte is " + answer[0]);
        }
        await(() -> refused("no_secret") == 1);
    }

    @Test
    void aReaderThatStopsReadingIsDisconnectedAndTheLogMovesOn() throws Exception {
        open(1 << 20, null, 8);
        try (Socket s = new Socket("127.0.0.1", tcp.port())) {
            s.setReceiveBufferSize(4096);
            byte[] nonce = challenge(s);
            send(s, new FeedFrame.Auth(FeedAuth.mac(SECRET, nonce)), new FeedFrame.Subscribe(FeedFrame.Subscribe.LIVE));
            await(() -> tcp.readerCount() == 1);
            // 32 MiB of durable events through a 1 MiB log: the stalled reader's position is evicted
            for (long seq = 1; seq <= 2048; seq++) {
                log.appendEvent(seq, event(seq, 16 << 10));
                log.advanceDurable(seq);
            }
            await(() -> metrics.feedSlowReadersDisconnected.count() == 1);
            await(() -> tcp.readerCount() == 0);
        }
    }

    /** Seqs 1..20 sealed, 21..60 in the active file (blocks of 8). */
    private void writeSegments() throws IOException {
        try (SegmentWriter w = SegmentWriter.open(java.nio.file.Files.createDirectories(dir.resolve("segments")),
                new SegmentWriter.Config(8, 1L << 30, Duration.ZERO))) {
            for (long seq = 1; seq <= 60; seq++) {
                if (seq == 21) {
                    w.forceRotate();
                }
                byte[] did = ("did:plc:reader" + (seq % 7)).getBytes(StandardCharsets.UTF_8);
                w.append(seq, seq * 10, 0, 1, did, "app.bsky.feed.post".getBytes(StandardCharsets.UTF_8),
                        new byte[] {'k'}, new byte[] {'r'}, new byte[] {(byte) 0xa0});
            }
            w.flush();
        }
    }

    /**
     * A remote gateway's READ_ACTIVE: after the handshake the ingester answers the durable complete blocks
     * of its active file from the asked seq, and where the archive's seqs end; nothing above the watermark.
     */
    @Test
    void readActiveAnswersTheDurableActiveBlocksAfterTheHandshake() throws Exception {
        writeSegments();
        active = new ActiveBlockSource(dir.resolve("segments"));
        open(1 << 20, null, 4);
        log.advanceDurable(50);
        FeedActiveBlocks blocks = new FeedActiveBlocks(remote(SECRET, null), Duration.ofSeconds(5), new BlockCache(1 << 20));
        BlockView v = new BlockView();
        try (ZstdFrames z = new ZstdFrames()) {
            long seq = 21;
            while (true) {
                FeedActiveBlocks.Found f = blocks.find(seq, 0, z);
                assertEquals(21, f.activeFrom(), "the seq after the last seal");
                if (f.body() == null) {
                    break;
                }
                v.decode(f.body(), 0, f.body().length);
                assertTrue(v.seq(0) <= seq && v.seq(v.size() - 1) >= seq, "the block holding " + seq);
                seq = v.seq(v.size() - 1) + 1;
            }
            assertTrue(seq > 40 && seq <= 51, "every durable block and none above the watermark: stopped at " + seq);
        }
        assertEquals(0, refused("bad_secret"));
        assertTrue(blocks.requests() >= 1 && blocks.frameBytes() > 0);
    }

    @Test
    void readActiveWithoutASourceIsRefusedAsProtocol() throws Exception {
        writeSegments();
        open(1 << 20, null, 4);
        log.advanceDurable(60);
        FeedActiveBlocks blocks = new FeedActiveBlocks(remote(SECRET, null), Duration.ofSeconds(5), new BlockCache(0));
        try (ZstdFrames z = new ZstdFrames()) {
            org.junit.jupiter.api.Assertions.assertThrows(java.io.UncheckedIOException.class, () -> blocks.find(21, 0, z));
        }
        await(() -> refused("protocol") == 1);
    }

    @Test
    void readActiveWithAWrongSecretIsRefusedBeforeAnyBlock() throws Exception {
        writeSegments();
        active = new ActiveBlockSource(dir.resolve("segments"));
        open(1 << 20, null, 4);
        log.advanceDurable(60);
        byte[] wrong = "another-secret-of-32-bytes-lengt".getBytes(StandardCharsets.UTF_8);
        FeedActiveBlocks blocks = new FeedActiveBlocks(remote(wrong, null), Duration.ofSeconds(5), new BlockCache(1 << 20));
        try (ZstdFrames z = new ZstdFrames()) {
            org.junit.jupiter.api.Assertions.assertThrows(java.io.UncheckedIOException.class, () -> blocks.find(21, 0, z));
        }
        await(() -> refused("bad_secret") == 1);
        assertEquals(0, blocks.frameBytes());
    }
}
