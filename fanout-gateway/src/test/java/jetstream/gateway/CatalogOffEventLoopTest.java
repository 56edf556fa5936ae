package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Upgrades resolve their cursors on the catalog's last snapshot: no rescan (which opens every segment
 * header under the catalog's lock) runs on the event loop for an upgrade, with or without a cursor;
 * a time cursor, which reads segment blocks, resolves off the event loop.
 */
@QuarkusTest
@Tag("component")
class CatalogOffEventLoopTest extends FixtureTestBase {

    @Test
    void upgradesWithCursorsDoNotRescanTheSegmentDirectory() throws Exception {
        long before = gateway.cold().catalog().refreshes();
        long sealedMin = Fixture.lastSealedMinSeq(gateway);
        assertEquals(before + 1, gateway.cold().catalog().refreshes(), "the fixture's own rescan is counted");
        long time = Fixture.row(sealedMin).witnessedAt();
        // requireHello holds the start, so no cold read (which may rescan on its worker) begins.
        for (String cursor : new String[] {"1", Long.toString(sealedMin), Long.toString(time), ""}) {
            open.add(Ws.connect(vertx, base.getPort(), "/subscribe?requireHello=true&cursor=" + cursor, false, null,
                    null));
        }
        open.add(Ws.connect(vertx, base.getPort(), UpgradeFilter.V2_PATH + "?cursor=999999999", false, null, null));
        for (int i = 0; i < 400 && gateway.subscribers().size() < 5; i++) {
            Thread.sleep(25);
        }
        assertEquals(5, gateway.subscribers().size());
        assertEquals(before + 1, gateway.cold().catalog().refreshes(), "no upgrade rescanned the catalog");
    }

    @Test
    void timeCursorsReadTheActiveSegmentOffTheEventLoop() throws Exception {
        List<String> readers = new CopyOnWriteArrayList<>();
        Gateway.ActiveSearch[] real = new Gateway.ActiveSearch[1];
        real[0] = gateway.activeSearch((active, ts, from, zstd) -> {
            readers.add(Thread.currentThread().getName()
                    + (io.vertx.core.Context.isOnEventLoopThread() ? " (event loop)" : ""));
            return real[0].find(active, ts, from, zstd);
        });
        try {
            var sealed = gateway.cold().catalog().snapshot().sealed();
            assertTrue(!gateway.cold().catalog().snapshot().active().isEmpty(), "the fixture has an active segment");
            // A time past every sealed segment: resolved through the active segment's blocks.
            long time = Fixture.row(sealed.get(sealed.size() - 1).maxSeq() + 2).witnessedAt();
            Ws v1 = Ws.connect(vertx, base.getPort(), "/subscribe?requireHello=true&cursor=" + time, false, null, null);
            open.add(v1);
            open.add(Ws.connect(vertx, base.getPort(), UpgradeFilter.V2_PATH + "?cursor=" + time, false, null, null));
            for (int i = 0; i < 400 && gateway.subscribers().size() < 2; i++) {
                Thread.sleep(25);
            }
            assertEquals(2, gateway.subscribers().size(), "both upgrades went through");
            assertEquals(2, readers.size(), "each time cursor searched the active segment once: " + readers);
            for (String r : readers) {
                assertTrue(r.startsWith("cursor-resolver-"), "read on " + r);
            }
        } finally {
            gateway.activeSearch(real[0]);
        }
    }
}
