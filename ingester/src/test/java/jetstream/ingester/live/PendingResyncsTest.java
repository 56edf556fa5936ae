package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.ingester.store.MetaStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durable pending-resync markers and held events: staging, bounds, recovery and refusal of damage. */
@Tag("unit")
class PendingResyncsTest {
    private static final String A = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
    private static final String B = "did:web:b.example.com";

    @Test
    void heldEventsComeBackInArrivalOrderAfterARestart(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            PendingResyncs p = new PendingResyncs(10, 1 << 20, 1 << 20);
            Map<String, byte[]> stage = new HashMap<>();
            assertEquals(PendingResyncs.Begin.BEGUN, p.begin(A, PendingResyncs.Cause.CHAIN_BREAK, null, stage));
            assertEquals(PendingResyncs.Begin.ALREADY, p.begin(A, PendingResyncs.Cause.CHAIN_BREAK, null, stage),
                    "one pending resync per DID");
            assertEquals(PendingResyncs.Begin.BEGUN, p.begin(B, PendingResyncs.Cause.CHAIN_BREAK, null, stage));
            // seq 9 sorts after 10 as text; the fixed-width key keeps numeric order
            assertTrue(p.hold(A, 9, new byte[] {1}, stage));
            assertTrue(p.hold(A, 10, new byte[] {2, 2}, stage));
            assertTrue(p.hold(B, 11, new byte[] {3}, stage));
            assertThrows(IllegalStateException.class, () -> p.hold("did:plc:other", 12, new byte[1], new HashMap<>()));
            commit(store, stage);

            PendingResyncs r = PendingResyncs.recover(store, 10, 1 << 20, 1 << 20);
            assertEquals(List.of(A, B), List.copyOf(r.dids()));
            assertEquals(3, r.heldCount());
            Map<String, byte[]> end = new HashMap<>();
            List<PendingResyncs.Held> held = r.finish(A, end);
            assertEquals(List.of(9L, 10L), held.stream().map(PendingResyncs.Held::seq).toList());
            assertArrayEquals(new byte[] {2, 2}, held.get(1).frame());
            assertFalse(r.isPending(A));
            assertEquals(3, end.size(), "marker and both held events are deleted");
            assertTrue(end.values().stream().allMatch(v -> v == null));
            commit(store, end);
            assertNull(store.get(PendingResyncs.RESYNC_PREFIX + A));
            assertEquals(1, store.page(PendingResyncs.HELD_PREFIX, null, 10_000).size());
            assertEquals(List.of(B), List.copyOf(PendingResyncs.recover(store, 10, 1 << 20, 1 << 20).dids()));
        }
    }

    @Test
    void holdsAreBoundedPerDidAndInBytes() {
        PendingResyncs p = new PendingResyncs(2, 10, 1 << 20);
        Map<String, byte[]> stage = new HashMap<>();
        p.begin(A, PendingResyncs.Cause.CHAIN_BREAK, null, stage);
        p.begin(B, PendingResyncs.Cause.CHAIN_BREAK, null, stage);
        assertTrue(p.hold(A, 1, new byte[4], stage));
        assertTrue(p.hold(A, 2, new byte[4], stage));
        assertFalse(p.hold(A, 3, new byte[1], stage), "per-DID bound");
        assertFalse(p.hold(B, 4, new byte[3], stage), "byte bound across DIDs");
        assertTrue(p.hold(B, 5, new byte[2], stage));
        p.finish(A, stage);
        assertTrue(p.hold(B, 6, new byte[8], stage), "finishing frees the bytes");
    }

    @Test
    void pendingMarkersAreBoundedInBytes(@TempDir Path dir) {
        long one = PendingResyncs.MARKER_OVERHEAD + A.length();
        PendingResyncs p = new PendingResyncs(10, 1 << 20, 2 * one + 1);
        Map<String, byte[]> stage = new HashMap<>();
        String c = "did:plc:cccccccccccccccccccccccc";
        assertEquals(PendingResyncs.Begin.BEGUN, p.begin(A, PendingResyncs.Cause.IDENTITY, null, stage));
        assertEquals(PendingResyncs.Begin.BEGUN, p.begin(c, PendingResyncs.Cause.IDENTITY, null, stage));
        assertEquals(PendingResyncs.Begin.FULL, p.begin("did:plc:dddddddddddddddddddddddd", PendingResyncs.Cause.IDENTITY,
                null, stage), "a third waiting DID does not fit");
        assertEquals(PendingResyncs.Begin.FULL, p.begin(B, PendingResyncs.Cause.SYNC, new byte[100], stage),
                "a #sync frame counts too");
        assertFalse(stage.containsKey(PendingResyncs.RESYNC_PREFIX + B), "a refused DID stages nothing");
        assertEquals(2, p.dids().size());
        p.finish(A, stage);
        assertEquals(PendingResyncs.Begin.BEGUN, p.begin("did:plc:dddddddddddddddddddddddd", PendingResyncs.Cause.IDENTITY,
                null, stage), "finishing frees the marker's bytes");
        try (MetaStore store = MetaStore.open(dir)) {
            commit(store, stage);
            PendingResyncs r = PendingResyncs.recover(store, 10, 1 << 20, one);
            assertEquals(2, r.dids().size(), "markers of a previous run are kept even past a smaller bound");
            assertEquals(PendingResyncs.Begin.FULL, r.begin(A, PendingResyncs.Cause.CHAIN_BREAK, null, new HashMap<>()));
        }
    }

    @Test
    void damagedEntriesFailLoudly(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            commit(store, Map.of(PendingResyncs.heldKey(A, 1), new byte[] {1, 7}));
            assertThrows(IllegalStateException.class, () -> PendingResyncs.recover(store, 10, 100, 1 << 20), "held without a marker");
            commit(store, Map.of(PendingResyncs.RESYNC_PREFIX + A, new byte[] {2}));
            assertThrows(IllegalStateException.class, () -> PendingResyncs.recover(store, 10, 100, 1 << 20), "unknown marker version");
            commit(store, Map.of(PendingResyncs.RESYNC_PREFIX + A, new byte[] {1}));
            assertEquals(1, PendingResyncs.recover(store, 10, 100, 1 << 20).heldCount());
            commit(store, Map.of(PendingResyncs.HELD_PREFIX + A + "/12", new byte[] {1}));
            assertThrows(IllegalStateException.class, () -> PendingResyncs.recover(store, 10, 100, 1 << 20), "malformed seq");
        }
    }

    /** Commits a stage as the writer's durability batch would (a null value deletes). */
    static void commit(MetaStore store, Map<String, byte[]> stage) {
        try (MetaStore.Batch b = store.batch()) {
            stage.forEach((k, v) -> {
                if (v == null) {
                    b.delete(k);
                } else {
                    b.put(k, v);
                }
            });
            b.commit();
        }
    }
}
