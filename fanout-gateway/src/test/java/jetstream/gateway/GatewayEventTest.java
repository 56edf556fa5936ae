package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Encode once, send many (docs/invariants.md §7): an event's frame of each wire, plain or zstd, is one object
 * that every subscriber is handed; the compressed form is made once per wire even when many subscribers ask
 * for it first at the same moment.
 */
@Tag("unit")
class GatewayEventTest {
    private static final byte[] V1 = "{\"did\":\"did:plc:a\",\"time_us\":1,\"kind\":\"commit\"}"
            .getBytes(StandardCharsets.UTF_8);
    private static final byte[] V2 = "{\"seq\":7,\"did\":\"did:plc:a\",\"time\":\"2026-01-01T00:00:00.000000Z\"}"
            .getBytes(StandardCharsets.UTF_8);

    private static GatewayEvent event() {
        return new GatewayEvent(7, 1, 1, "did:plc:a", "app.bsky.feed.post", V1, V2, false);
    }

    @Test
    void everyAskGetsTheSameFramePerWire() {
        GatewayEvent e = event();
        for (Wire w : Wire.values()) {
            assertSame(e.textFrame(w), e.textFrame(w), w + " text");
            assertSame(e.zstdFrame(w), e.zstdFrame(w), w + " zstd");
        }
        assertArrayEquals(V1, e.text(Wire.V1).getBytes());
        assertArrayEquals(V2, e.text(Wire.V2).getBytes());
    }

    @Test
    void concurrentFirstAsksCompressOnce() throws Exception {
        int threads = 8;
        for (int round = 0; round < 50; round++) {
            GatewayEvent e = event();
            CountDownLatch go = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<WsFrame>> asks = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    asks.add(pool.submit(() -> {
                        go.await();
                        return e.zstdFrame(Wire.V2);
                    }));
                }
                go.countDown();
                WsFrame first = asks.get(0).get(10, TimeUnit.SECONDS);
                assertNotNull(first);
                for (Future<WsFrame> f : asks) {
                    assertSame(first, f.get(10, TimeUnit.SECONDS), "round " + round);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aKindV1DoesNotShowHasNoV1Frame() {
        GatewayEvent e = new GatewayEvent(8, 1, 6, "did:plc:a", "", null, V2, false);
        assertNull(e.textFrame(Wire.V1));
        assertNull(e.text(Wire.V1));
        assertSame(e.textFrame(Wire.V2), e.textFrame(Wire.V2));
    }
}
