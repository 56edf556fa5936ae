package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.github.luben.zstd.Zstd;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;
import jetstream.atproto.syntax.RecordKey;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.FrameMutations;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drives {@link LiveConsumer#handle} (decode, verification, ratchets, holds, conversion, writer
 * submission) with real relay frames from the corpus, mutated: bytes flipped, fields replaced with
 * hostile values or removed, frames cut short. Every DID's document is cached, so unmutated commits
 * verify; the PLC and every PDS are unreachable, so holds and resyncs stay pending. The consumer must
 * never throw, the writer never fail, and every archived row must pass the ingest gate. Reaching the
 * iteration floor ({@code jetstream.fuzz.iterations} / 50, at least 2 000) is required.
 */
@Tag("fuzz")
class LiveConsumerFuzzTest {
    @TempDir
    Path dir;

    @Test
    void mutatedRelayFramesNeverBreakTheConsumer() throws Exception {
        long iterations = Math.max(2_000, Long.getLong("jetstream.fuzz.iterations", 100_000) / 50);
        long seconds = Long.getLong("jetstream.fuzz.seconds", 600);
        long seed = Long.getLong("jetstream.fuzz.seed", 20261203L);
        Path corpus = jetstream.testing.Vectors.resolve("jetstream-corpus");
        List<byte[]> frames = frames(Files.readAllBytes(corpus.resolve("relay_frames.bin")));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngestMetrics metrics = new IngestMetrics(registry);
        Random rnd = new Random(seed);
        long done = 0;
        try (MetaStore store = MetaStore.open(dir)) {
            cacheDocuments(store, Files.readAllBytes(corpus.resolve("did_docs.json.zst")));
            SteadyWriter writer = SteadyWriter.open(dir, store, new SegmentWriter.Config(512, 8 << 20, Duration.ofMillis(200)),
                    SegmentIO.PRODUCTION, 512, 8 << 20, () -> {}, metrics, t -> fail("writer failed", t));
            HttpClient http = HttpClient.newHttpClient();
            LiveConsumer c = new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                    new IdentityResolver(http, "http://127.0.0.1:1", store, Duration.ofHours(24)), metrics, true, () -> true,
                    endpoint -> "http://127.0.0.1:1", new HostnamePolicy(false), t -> fail("consumer found its state corrupt", t));
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            for (; done < iterations && System.nanoTime() < deadline; done++) {
                byte[] base = frames.get(rnd.nextInt(frames.size()));
                byte[] input = switch (rnd.nextInt(4)) {
                    case 0 -> base;
                    case 1 -> FrameMutations.flipBytes(rnd, base);
                    case 2 -> java.util.Arrays.copyOf(base, rnd.nextInt(base.length));
                    default -> FrameMutations.restructure(rnd, base);
                };
                try {
                    c.handle(input);
                } catch (RuntimeException e) {
                    fail("iteration " + done + " (seed " + seed + ") threw " + e + " on " + HexFormat.of().formatHex(input), e);
                }
            }
            c.close();
            writer.close();
            assertNull(writer.failure());
        }
        System.out.println("LiveConsumerFuzzTest: " + done + " frames, "
                + registry.counter("jetstream_ingest_events_appended_total").count() + " rows, seed " + seed);
        assertTrue(done >= iterations, "only " + done + " of " + iterations + " frames within the " + seconds + " s guard");
        long rows = 0;
        for (jetstream.feed.FeedFrame.Event e : jetstream.ingester.ArchiveScan.events(dir)) {
            String did = new String(e.did(), StandardCharsets.UTF_8);
            assertTrue(Did.isValid(did), did);
            if (ArchiveRow.isCommitKind(e.kind())) {
                String col = new String(e.collection(), StandardCharsets.UTF_8);
                String rkey = new String(e.rkey(), StandardCharsets.UTF_8);
                String rev = new String(e.rev(), StandardCharsets.UTF_8);
                assertTrue(Nsid.isValid(col) && RecordKey.isValid(rkey) && Tid.isValid(rev), col + "/" + rkey + " " + rev);
            }
            rows++;
        }
        assertTrue(rows > 0, "unmutated frames verify and are archived");
        assertEquals(rows, (long) registry.counter("jetstream_ingest_events_appended_total").count());
    }

    private static List<byte[]> frames(byte[] file) {
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        List<byte[]> out = new ArrayList<>();
        while (b.hasRemaining()) {
            byte[] f = new byte[b.getInt()];
            b.get(f);
            out.add(f);
        }
        return out;
    }

    /** Stores every corpus DID's document in the identity cache, as a resolution would. */
    private static void cacheDocuments(MetaStore store, byte[] zst) throws Exception {
        byte[] json = Zstd.decompress(zst, (int) Zstd.getFrameContentSize(zst));
        JsonFactory f = new JsonFactory();
        long expiry = System.currentTimeMillis() * 1_000_000L + Duration.ofHours(1).toNanos();
        try (MetaStore.Batch b = store.batch(); JsonParser p = f.createParser(json)) {
            p.nextToken();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String did = p.currentName();
                p.nextToken();
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                try (JsonGenerator g = f.createGenerator(out)) {
                    g.copyCurrentStructure(p);
                }
                byte[] doc = out.toByteArray();
                b.put(MetaKeys.SYNC_IDENTITY_PREFIX + did, ByteBuffer.allocate(8 + doc.length).putLong(expiry).put(doc).array());
            }
            b.commit();
        }
    }
}
