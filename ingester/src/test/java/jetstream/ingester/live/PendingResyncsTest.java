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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durable pending-resync markers and held events: staging, bounds, recovery and refusal of damage. */
class PendingResyncsTest {
    private static final String A = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
    private static final String B = "did:web:b.example.com";

    @Test
    void heldEventsComeBackInArrivalOrderAfterARestart(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            PendingResyncs p = new PendingResyncs(10, 1 << 20);
            Map<String, byte[]> stage = new HashMap<>();
            assertTrue(p.begin(A, stage));
            assertFalse(p.begin(A, stage), "one pending resync per DID");
            assertTrue(p.begin(B, stage));
            // seq 9 sorts after 10 as text; the fixed-width key keeps numeric order
            assertTrue(p.hold(A, 9, new byte[] {1}, stage));
            assertTrue(p.hold(A, 10, new byte[] {2, 2}, stage));
            assertTrue(p.hold(B, 11, new byte[] {3}, stage));
            assertThrows(IllegalStateException.class, () -> p.hold("did:plc:other", 12, new byte[1], new HashMap<>()));
            commit(store, stage);

            PendingResyncs r = PendingResyncs.recover(store, 10, 1 << 20);
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
            assertEquals(List.of(B), List.copyOf(PendingResyncs.recover(store, 10, 1 << 20).dids()));
        }
    }

    @Test
    void holdsAreBoundedPerDidAndInBytes() {
        PendingResyncs p = new PendingResyncs(2, 10);
        Map<String, byte[]> stage = new HashMap<>();
        p.begin(A, stage);
        p.begin(B, stage);
        assertTrue(p.hold(A, 1, new byte[4], stage));
        assertTrue(p.hold(A, 2, new byte[4], stage));
        assertFalse(p.hold(A, 3, new byte[1], stage), "per-DID bound");
        assertFalse(p.hold(B, 4, new byte[3], stage), "byte bound across DIDs");
        assertTrue(p.hold(B, 5, new byte[2], stage));
        p.finish(A, stage);
        assertTrue(p.hold(B, 6, new byte[8], stage), "finishing frees the bytes");
    }

    @Test
    void damagedEntriesFailLoudly(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            commit(store, Map.of(PendingResyncs.heldKey(A, 1), new byte[] {1, 7}));
            assertThrows(IllegalStateException.class, () -> PendingResyncs.recover(store, 10, 100), "held without a marker");
            commit(store, Map.of(PendingResyncs.RESYNC_PREFIX + A, new byte[] {2}));
            assertThrows(IllegalStateException.class, () -> PendingResyncs.recover(store, 10, 100), "unknown marker version");
            commit(store, Map.of(PendingResyncs.RESYNC_PREFIX + A, new byte[] {1}));
            assertEquals(1, PendingResyncs.recover(store, 10, 100).heldCount());
            commit(store, Map.of(PendingResyncs.HELD_PREFIX + A + "/12", new byte[] {1}));
            assertThrows(IllegalStateException.class, () -> PendingResyncs.recover(store, 10, 100), "malformed seq");
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
