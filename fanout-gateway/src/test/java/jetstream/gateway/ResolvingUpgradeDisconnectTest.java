package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

/**
 * An upgrade whose client goes away while its time cursor is being resolved (on the cursor-resolver
 * pool, the request paused) gives back its subscriber slot and its state bytes as soon as the
 * resolution ends, not when the sweep expires unused preparations 30 s later.
 */
@QuarkusTest
@Tag("component")
class ResolvingUpgradeDisconnectTest extends FixtureTestBase {
    @Inject
    SubscriberLimits limits;

    @Test
    void aClientGoneDuringCursorResolutionReleasesItsReservationAtOnce() throws Exception {
        long baseline = gateway.stateBudget().used();
        assertEquals(0, limits.total(), "no slot held before the test");
        CountDownLatch resolving = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Gateway.ActiveSearch[] real = new Gateway.ActiveSearch[1];
        real[0] = gateway.activeSearch((active, ts, from, zstd) -> {
            resolving.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return real[0].find(active, ts, from, zstd);
        });
        try {
            var sealed = gateway.cold().catalog().snapshot().sealed();
            // a time past every sealed segment: resolved through the active segment, on the resolver pool
            long time = Fixture.row(sealed.get(sealed.size() - 1).maxSeq() + 2).witnessedAt();
            try (Socket s = new Socket("127.0.0.1", base.getPort())) {
                OutputStream out = s.getOutputStream();
                out.write(("GET /subscribe?cursor=" + time + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertTrue(resolving.await(20, TimeUnit.SECONDS), "the cursor went to the resolver");
                assertTrue(gateway.stateBudget().used() > baseline, "the waiting upgrade holds its state bytes");
            }
            // the client is gone; the resolution now finishes
            Thread.sleep(200);
            release.countDown();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while ((limits.total() > 0 || gateway.stateBudget().used() > baseline) && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertEquals(0, limits.total(), "the subscriber slot came back");
            assertEquals(baseline, gateway.stateBudget().used(), "the state bytes came back");
            assertEquals(0, gateway.subscribers().size(), "no subscriber was opened for the gone client");
        } finally {
            release.countDown();
            gateway.activeSearch(real[0]);
        }
    }
}
