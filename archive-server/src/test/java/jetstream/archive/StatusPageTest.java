package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.StandardProtocolFamily;
import java.net.URL;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import jetstream.atproto.cbor.CborWriter;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The status page against a fake ingester speaking the real feed protocol and a gateway stats file:
 * every value the frames carry shows up in {@code /status.json} and, for the same snapshot number,
 * identically in the HTML's {@code data-value}s; the backfill ETA is derived from progress; a stale
 * gateway is listed but not counted; unknowns are null, never numbers; the charts draw the ring;
 * the account lookup resolves a handle through {@code #identity} rows and reports the DID's rows.
 */
@QuarkusTest
@TestProfile(StatusPageTest.Profile.class)
@Tag("component")
class StatusPageTest {
    static final Path DATA = Path.of("target/test-data-status").toAbsolutePath();
    static final String ALICE = "did:plc:aliceaaaaaaaaaaaaaaaaaaa";
    static final String BOB = "did:plc:bobbbbbbbbbbbbbbbbbbbbbbb";

    public static final class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = TestArchive.feedConfig(DATA, "jetstream.status.sample-interval", "100ms");
            writeArchive(DATA.resolve("segments"));
            return config;
        }
    }

    @TestHTTPResource("/")
    URL base;

    /** Alice: 3 creates, a handle change, a deactivation; Bob: 2 creates, in blocks of 2 rows. */
    static void writeArchive(Path segments) {
        try {
            Path tmp = Files.createDirectories(DATA.resolve("tmp-writer"));
            try (SegmentWriter w = SegmentWriter.open(tmp, new SegmentWriter.Config(2, 1L << 40, Duration.ZERO))) {
                long t = 1_750_000_000_000_000L;
                commit(w, 1, t + 1, ALICE);
                commit(w, 2, t + 2, BOB);
                commit(w, 3, t + 3, ALICE);
                w.append(4, t + 4, 0, 4, ALICE.getBytes(StandardCharsets.US_ASCII), null, null, null,
                        new CborWriter().writeMapHeader(3).writeText("did").writeText(ALICE).writeText("seq").writeInt(9)
                                .writeText("handle").writeText("alice.test").toByteArray());
                commit(w, 5, t + 5, BOB);
                commit(w, 6, t + 6, ALICE);
                w.append(7, t + 7, 0, 5, ALICE.getBytes(StandardCharsets.US_ASCII), null, null, null,
                        new CborWriter().writeMapHeader(3).writeText("did").writeText(ALICE).writeText("active").writeBool(false)
                                .writeText("status").writeText("deactivated").toByteArray());
                w.seal();
            }
            Files.createDirectories(segments);
            try (Stream<Path> files = Files.list(tmp)) {
                Path sealed = files.filter(p -> p.getFileName().toString().endsWith(".jss")).findFirst().orElseThrow();
                Files.move(sealed, segments.resolve(SegmentName.format(0)));
            }
            TestArchive.clear(tmp);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void commit(SegmentWriter w, long seq, long at, String did) {
        w.append(seq, at, 0, 1, did.getBytes(StandardCharsets.US_ASCII), "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII),
                ("3k" + seq).getBytes(StandardCharsets.US_ASCII), ("3mrev" + seq).getBytes(StandardCharsets.US_ASCII),
                new CborWriter().writeMapHeader(1).writeText("text").writeText("hi").toByteArray());
    }

    /** The next connection of the archive's feed client, or a failure after {@code seconds}. */
    private static SocketChannel acceptWithin(ServerSocketChannel server, int seconds) throws Exception {
        server.configureBlocking(false);
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            SocketChannel ch = server.accept();
            if (ch != null) {
                ch.configureBlocking(true);
                return ch;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the archive did not reconnect to the feed within " + seconds + " s");
    }

    /** Reads the reader's SUBSCRIBE frame and returns its fromSeq. */
    private static long subscribeSeq(SocketChannel ch) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64);
        while (b.position() < FeedCodec.LENGTH_PREFIX
                || b.position() < FeedCodec.LENGTH_PREFIX + FeedCodec.contentLength(b.array(), 0)) {
            if (ch.read(b) < 0) {
                throw new IOException("closed before a SUBSCRIBE frame");
            }
        }
        FeedFrame f = FeedCodec.decode(b.array(), FeedCodec.LENGTH_PREFIX, FeedCodec.contentLength(b.array(), 0));
        return ((FeedFrame.Subscribe) f).fromSeq();
    }

    private static void gatewayFile(Path run, String id, long subscribers, long updatedAtMicros) throws IOException {
        Files.writeString(run.resolve("gateway-" + id + ".json"), new JsonObject().put("id", id)
                .put("address", "127.0.0.1:1234").put("subscribers", subscribers).put("updatedAt", updatedAtMicros).encode());
    }

    static long nowMicros() {
        return System.currentTimeMillis() * 1000;
    }

    @Test
    void statusShowsWhatTheFeedCarries() throws Exception {
        Http http = new Http(base);
        JsonObject before = new JsonObject(Http.text(http.get("/status.json")));
        assertEquals(Boolean.FALSE, before.getJsonObject("feed").getBoolean("connected"));
        assertNull(before.getJsonObject("phase").getValue("current"), "no feed: phase unknown");
        assertNull(before.getJsonObject("ingest").getValue("eventsPerSecond"));
        assertNull(before.getJsonObject("subscribers").getValue("total"), "no gateway stats: unknown, not 0");
        assertEquals(Boolean.FALSE, before.getJsonObject("bootstrap").getBoolean("reported"));

        Path run = Files.createDirectories(DATA.resolve("run"));
        gatewayFile(run, "gw-a", 3, nowMicros() + 600_000_000L);
        gatewayFile(run, "gw-old", 99, nowMicros() - 60_000_000L);
        Path sock = run.resolve("feed.sock");
        long entered = nowMicros() - 120_000_000L;
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            try (SocketChannel ch = server.accept()) {
                ch.read(ByteBuffer.allocate(64));
                TestArchive.send(ch, new FeedFrame.Subscribed(8, 0, 7, 8));
                TestArchive.send(ch, new FeedFrame.Phase(LifecyclePhase.BOOTSTRAP, LifecyclePhase.NONE, entered));
                TestArchive.send(ch, new FeedFrame.BackfillProgress(100, 100, 80, 20, 0, 0));
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(nowMicros() + 3_600_000_000L, 5, 0, 3, 4));
                TestArchive.send(ch, new FeedFrame.ImportStatus("job-1", "running", 10, 5, 1, nowMicros()));
                Thread.sleep(600);
                long seq = 8;
                for (int round = 0; round < 10; round++) {
                    for (int i = 0; i < 5; i++, seq++) {
                        TestArchive.send(ch, new FeedFrame.Event(seq, nowMicros(), 0, 1, BOB.getBytes(StandardCharsets.US_ASCII),
                                "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII), "3kx".getBytes(StandardCharsets.US_ASCII),
                                "3mrev".getBytes(StandardCharsets.US_ASCII), new byte[] {(byte) 0xa0}));
                    }
                    TestArchive.send(ch, new FeedFrame.Watermark(seq - 1));
                    // host outcomes ride along: 32 hosts, 28 drained, 3 exhausted (1 of them retrying)
                    TestArchive.send(ch, new FeedFrame.BackfillProgress(100, 100, 78 - 2 * round, 22 + 2 * round, 0, 0,
                            new FeedFrame.BackfillProgress.Hosts(32, 28, 3, 1)));
                    Thread.sleep(120);
                }
                Thread.sleep(500);
                JsonObject s = new JsonObject(Http.text(http.get("/status.json")));
                assertEquals(Boolean.TRUE, s.getJsonObject("feed").getBoolean("connected"));
                JsonObject phase = s.getJsonObject("phase");
                assertEquals("bootstrap", phase.getString("current"));
                assertTrue(phase.getDouble("inPhaseSeconds") >= 120, phase.encode());
                JsonObject boot = s.getJsonObject("bootstrap");
                assertEquals(100L, boot.getLong("total"));
                assertEquals(40L, boot.getLong("complete"));
                assertEquals(40.0, boot.getDouble("percent"));
                assertTrue(boot.getDouble("reposPerSecond") > 0, boot.encode());
                assertEquals(60 / boot.getDouble("reposPerSecond"), boot.getDouble("etaSeconds"), 0.5, boot.encode());
                JsonObject hosts = boot.getJsonObject("hosts");
                assertEquals(Boolean.TRUE, hosts.getBoolean("reported"), boot.encode());
                assertEquals(32L, hosts.getLong("total"));
                assertEquals(28L, hosts.getLong("drained"));
                assertEquals(3L, hosts.getLong("exhausted"), "exhausted hosts are visible and counted");
                assertEquals(1L, hosts.getLong("retrying"));
                assertTrue(Http.text(http.get("/status")).contains("hosts exhausted"), "the page shows them");
                JsonObject ingest = s.getJsonObject("ingest");
                assertEquals(50L, ingest.getLong("eventsSeen"));
                assertEquals(57L, ingest.getLong("lastEventSeq"));
                assertEquals(58L, ingest.getLong("nextSeq"));
                assertEquals(57L, ingest.getLong("durableSeq"));
                assertTrue(ingest.getDouble("freshnessSeconds") < 30, ingest.encode());
                JsonObject archive = s.getJsonObject("archive");
                assertEquals(1L, archive.getLong("segments"));
                assertEquals(7L, archive.getLong("sealedTipSeq"));
                assertEquals(7L, archive.getLong("events"));
                assertTrue(s.getJsonObject("disk").getLong("freeBytes") > 0);
                assertEquals(5L, s.getJsonObject("compaction").getLong("watermarkSeq"));
                assertTrue(s.getJsonObject("compaction").getDouble("nextDeadlineInSeconds") > 3000);
                assertNull(s.getJsonObject("compaction").getValue("runningSince"), "no pass running");
                assertEquals(3L, s.getJsonObject("compaction").getLong("segmentsDone"));
                assertEquals("running", s.getJsonObject("import").getString("state"));
                assertEquals("job-1", s.getJsonObject("import").getString("jobId"));
                JsonObject subs = s.getJsonObject("subscribers");
                assertEquals(3L, subs.getLong("total"), "the stale gateway is not counted: " + subs.encode());
                JsonArray gws = subs.getJsonArray("gateways");
                assertEquals(2, gws.size());
                assertEquals("gw-a", gws.getJsonObject(0).getString("id"));
                assertEquals(Boolean.TRUE, gws.getJsonObject(1).getBoolean("stale"));
                assertNull(gws.getJsonObject(1).getValue("subscribers"));
                JsonArray rates = s.getJsonObject("series").getJsonArray("eventsPerSecond");
                assertTrue(rates.stream().anyMatch(v -> v instanceof Number n && n.doubleValue() > 0), rates.encode());

                TestArchive.send(ch, new FeedFrame.Phase(LifecyclePhase.MERGING, LifecyclePhase.BOOTSTRAP, nowMicros() - 1_000_000L));
                Thread.sleep(400);
                JsonObject merging = new JsonObject(Http.text(http.get("/status.json"))).getJsonObject("phase");
                assertEquals("merging", merging.getString("current"));
                JsonObject bootDuration = merging.getJsonArray("observed").getJsonObject(0);
                assertEquals("bootstrap", bootDuration.getString("phase"));
                double secs = bootDuration.getDouble("seconds");
                assertTrue(secs >= 119 && secs < 135, merging.encode());
            }
            // the ingester is killed and restarts with its log floor above the last event seen (that event was
            // sent before it was durable): the archive is told TOO_OLD and must follow the live tip again
            try (SocketChannel ch = acceptWithin(server, 10)) {
                assertEquals(58L, subscribeSeq(ch), "resumes after the last event seen");
                TestArchive.send(ch, new FeedFrame.TooOld(58, 70));
            }
            try (SocketChannel ch = acceptWithin(server, 10)) {
                assertEquals(FeedFrame.Subscribe.LIVE, subscribeSeq(ch), "follows the live tip after TOO_OLD");
                TestArchive.send(ch, new FeedFrame.Subscribed(70, 70, 69, 70));
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(nowMicros() + 3_600_000_000L, 9, 0, 0, 0));
                long deadline = System.nanoTime() + 10_000_000_000L;
                JsonObject again;
                do {
                    Thread.sleep(100);
                    again = new JsonObject(Http.text(http.get("/status.json")));
                } while (again.getJsonObject("compaction").getLong("watermarkSeq") != 9 && System.nanoTime() < deadline);
                assertEquals(Boolean.TRUE, again.getJsonObject("feed").getBoolean("connected"));
                assertEquals(9L, again.getJsonObject("compaction").getLong("watermarkSeq"));
            }
        }

        String html = Http.text(http.get("/status"));
        Matcher id = Pattern.compile("<body data-snapshot=\"(\\d+)\"").matcher(html);
        assertTrue(id.find());
        JsonObject same = new JsonObject(Http.text(http.get("/status.json?snapshot=" + id.group(1))));
        int compared = assertPageMatches(html, same);
        assertTrue(compared >= 40, "values compared: " + compared);
        Matcher chart = Pattern.compile("data-series=\"(\\w+)\" data-points=\"(\\d+)\"").matcher(html);
        int charts = 0;
        while (chart.find()) {
            charts++;
            assertTrue(Integer.parseInt(chart.group(2)) > 0, chart.group(1) + " chart is empty");
        }
        assertEquals(4, charts);
        assertTrue(html.contains("<polyline points=\""), "charts draw lines");
        assertFalse(html.contains("http://") && html.contains("src=\"http"), "no external assets");
        assertEquals(404, http.get("/status.json?snapshot=999999").statusCode());
    }

    /** Every {@code data-field} of the page equals the JSON value at that path; returns how many. */
    static int assertPageMatches(String html, JsonObject json) {
        Matcher m = Pattern.compile("data-field=\"([^\"]+)\" data-value=\"([^\"]*)\"( class=\"unknown\")?>([^<]*)<").matcher(html);
        int n = 0;
        while (m.find()) {
            n++;
            Object v = json;
            for (String p : m.group(1).split("\\.")) {
                v = v instanceof JsonObject o ? o.getValue(p) : ((JsonArray) v).getValue(Integer.parseInt(p));
            }
            String shown = unescape(m.group(4));
            String raw = unescape(m.group(2));
            if (v == null) {
                assertEquals("null", raw, m.group(1));
                assertEquals("unknown", shown, m.group(1));
            } else if (v instanceof Number num) {
                assertEquals(0, new BigDecimal(num.toString()).compareTo(new BigDecimal(raw)), m.group(1) + ": " + raw + " vs " + v);
                assertEquals(raw, shown, m.group(1));
            } else if (v instanceof String str) {
                assertEquals(str, shown, m.group(1));
            } else {
                assertEquals(v.toString(), raw, m.group(1));
            }
        }
        return n;
    }

    private static String unescape(String s) {
        return s.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    }

    @Test
    void accountLookup() {
        Http http = new Http(base);
        JsonObject alice = new JsonObject(Http.text(http.get("/status.json?handle=Alice.Test"))).getJsonObject("lookup");
        assertEquals(ALICE, alice.getString("did"), alice.encode());
        assertEquals(Boolean.TRUE, alice.getBoolean("found"));
        assertEquals(5L, alice.getLong("events"));
        assertEquals(3L, alice.getJsonObject("byKind").getLong("create"));
        assertEquals(1L, alice.getJsonObject("byKind").getLong("identity"));
        assertEquals(1L, alice.getLong("firstSeq"));
        assertEquals(7L, alice.getLong("lastSeq"));
        assertEquals("3mrev6", alice.getString("lastRev"));
        assertEquals("alice.test", alice.getString("handle"));
        assertEquals(Boolean.FALSE, alice.getJsonObject("account").getBoolean("active"));
        assertEquals("deactivated", alice.getJsonObject("account").getString("status"));
        assertEquals(Boolean.FALSE, alice.getBoolean("partial"));

        JsonObject bob = new JsonObject(Http.text(http.get("/status.json?account=" + BOB))).getJsonObject("lookup");
        assertEquals(2L, bob.getLong("events"));
        assertNull(bob.getValue("handle"));
        assertNull(bob.getValue("account"));
        JsonObject nobody = new JsonObject(Http.text(http.get("/status.json?did=did:plc:nobodyyyyyyyyyyyyyyyyyyy")))
                .getJsonObject("lookup");
        assertEquals(Boolean.FALSE, nobody.getBoolean("found"));
        assertEquals(0L, nobody.getLong("events"));
        assertEquals("not a valid handle", new JsonObject(Http.text(http.get("/status.json?account=no%20such")))
                .getJsonObject("lookup").getString("error"));
        assertEquals(Boolean.FALSE, new JsonObject(Http.text(http.get("/status.json?handle=carol.test")))
                .getJsonObject("lookup").getBoolean("found"));

        String page = Http.text(http.get("/status?handle=alice.test"));
        assertTrue(page.contains("data-field=\"lookup.did\" data-value=\"&quot;" + ALICE + "&quot;\""), page);
        assertTrue(page.contains("<input name=\"account\""));
        String hostile = Http.text(http.get("/status?account=%3Cscript%3E"));
        assertFalse(hostile.contains("<script>"), "the query is escaped");
        assertNotNull(hostile);
    }
}
