package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/lifecycle.md: Live path step 4: the #identity / #account replay guards, with the account guard's hosting-state fallback. */
@Tag("unit")
class ReplayRatchetsTest {
    private static final String DID = "did:plc:ratchettest000000000000";
    private static final ByteSlice EMPTY = new ByteSlice(new byte[0], 0, 0);

    @Test
    void hostingStateRoundTripsAndRefusesDamage() {
        HostingState h = new HostingState(false, "takendown", 0x0102030405060708L, "2026-01-01T00:00:00.000Z");
        byte[] v = h.encode();
        assertEquals(1, v[0]);
        assertEquals(0, v[1]);
        assertEquals(9, v[2]);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, java.util.Arrays.copyOfRange(v, 12, 20), "seq is u64 BE");
        assertEquals(h, HostingState.decode("k", v));
        assertEquals(new HostingState(true, "", 5, ""), HostingState.decode("k", new HostingState(true, null, 5, null).encode()));
        assertThrows(IllegalStateException.class, () -> HostingState.decode("k", java.util.Arrays.copyOf(v, v.length - 1)));
        byte[] bad = v.clone();
        bad[0] = 2;
        assertThrows(IllegalStateException.class, () -> HostingState.decode("k", bad));
    }

    @Test
    void accountGuardFallsBackToTheStoredHostingSeq(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            try (MetaStore.Batch b = store.batch()) {
                b.put(MetaKeys.SYNC_HOST_PREFIX + DID, new HostingState(true, "", 100, "t").encode()).commit();
            }
            ReplayRatchets r = new ReplayRatchets(store);
            Map<String, byte[]> stage = new HashMap<>();
            assertFalse(r.account(account(100, false), stage), "seq equal to the hosting seq is a replay");
            assertFalse(r.account(account(42, false), stage));
            assertTrue(stage.isEmpty(), "a dropped replay stages nothing");
            assertTrue(r.account(account(101, false), stage));
            assertEquals(101, MetaKeys.readVersionedI64be("k", stage.get(MetaKeys.SYNC_ACCT_PREFIX + DID)));
            HostingState h = HostingState.decode("k", stage.get(MetaKeys.SYNC_HOST_PREFIX + DID));
            assertEquals(new HostingState(false, "deactivated", 101, "2026-01-01T00:00:00Z"), h);
            assertFalse(r.account(account(101, true), new HashMap<>()), "the accepted seq is applied at once, before it is durable");
        }
    }

    @Test
    void theAccountRatchetWinsOverTheHostingStateWhenBothExist(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            try (MetaStore.Batch b = store.batch()) {
                b.put(MetaKeys.SYNC_HOST_PREFIX + DID, new HostingState(true, "", 100, "t").encode())
                        .put(MetaKeys.SYNC_ACCT_PREFIX + DID, MetaKeys.versionedI64be(50)).commit();
            }
            assertTrue(new ReplayRatchets(store).account(account(60, true), new HashMap<>()));
            Map<String, byte[]> stage = new HashMap<>();
            ReplayRatchets r = new ReplayRatchets(store);
            assertTrue(r.identity(new FirehoseMessage.Identity(7, DID, "t", null, EMPTY), stage), "no identity ratchet yet");
            assertEquals(7, MetaKeys.readVersionedI64be("k", stage.get(MetaKeys.SYNC_IDENT_PREFIX + DID)));
            assertFalse(r.identity(new FirehoseMessage.Identity(7, DID, "t", null, EMPTY), new HashMap<>()));
        }
    }

    @Test
    void theLiveConsumerDropsAReplayedAccountAgainstTheHostingSeq(@TempDir Path dir) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngestMetrics metrics = new IngestMetrics(registry);
        try (MetaStore store = MetaStore.open(dir)) {
            try (MetaStore.Batch b = store.batch()) {
                b.put(MetaKeys.SYNC_HOST_PREFIX + DID, new HostingState(true, "", 100, "t").encode()).commit();
            }
            SteadyWriter writer = SteadyWriter.open(dir, store, new SegmentWriter.Config(16, 1 << 20, Duration.ofMillis(50)),
                    SegmentIO.PRODUCTION, 16, 1 << 20, () -> {}, metrics, t -> {
                        throw new AssertionError(t);
                    });
            HttpClient http = HttpClient.newHttpClient();
            LiveConsumer c = new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                    new IdentityResolver(http, "http://127.0.0.1:1", store, Duration.ofHours(24)), metrics, false,
                    () -> true, UnaryOperator.identity(), new jetstream.ingester.backfill.HostnamePolicy(false), t -> {
                        throw new AssertionError(t);
                    });
            assertTrue(c.handle(jetstream.ingester.SimFrames.account(99, DID, true)));
            assertTrue(c.handle(jetstream.ingester.SimFrames.account(100, DID, true)));
            assertTrue(c.handle(jetstream.ingester.SimFrames.account(101, DID, true)));
            writer.close();
            assertEquals(2, registry.counter("jetstream_livestream_replayed_account_events_dropped_total").count());
            assertEquals(1, writer.appendedCount(), "only the account event above the hosting seq is archived");
            assertEquals(101, MetaKeys.readVersionedI64be("k", store.get(MetaKeys.SYNC_ACCT_PREFIX + DID)));
            assertEquals(101, HostingState.decode("k", store.get(MetaKeys.SYNC_HOST_PREFIX + DID)).seq());
            assertEquals(101, MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR)),
                    "the cursor advances past dropped replays too");
        }
    }

    private static FirehoseMessage.Account account(long seq, boolean active) {
        return new FirehoseMessage.Account(seq, DID, "2026-01-01T00:00:00Z", active, active ? null : "deactivated", EMPTY);
    }
}
