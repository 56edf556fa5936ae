package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;



import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Upgrades resolve their cursors on the catalog's last snapshot: no rescan (which opens every segment
 * header under the catalog's lock) runs on the event loop for an upgrade, with or without a cursor.
 */
@QuarkusTest
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
}
