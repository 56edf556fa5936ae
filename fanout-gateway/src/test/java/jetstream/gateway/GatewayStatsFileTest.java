package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.vertx.core.json.JsonObject;

/** The stats file the status page reads: content, replacement by rename, leftovers, removal. */
class GatewayStatsFileTest {
    @TempDir
    Path dir;

    @Test
    void publishesCountsAndCleansUp() throws Exception {
        AtomicLong none = new AtomicLong(2);
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        GatewayStatsFile.Source src = new GatewayStatsFile.Source() {
            @Override
            public long subscribers() {
                return none.get() + 1;
            }

            @Override
            public long subscribers(SubscribeMetrics.Compression c) {
                return c == SubscribeMetrics.Compression.NONE ? none.get() : c == SubscribeMetrics.Compression.ZSTD ? 1 : 0;
            }

            @Override
            public boolean feedConnected() {
                return true;
            }

            @Override
            public String address() {
                return "127.0.0.1:9";
            }
        };
        Path run = dir.resolve("run");
        Files.createDirectories(run);
        Path leftover = run.resolve("gateway-dead.json");
        Files.writeString(leftover, "{}");
        Files.setLastModifiedTime(leftover, FileTime.fromMillis(System.currentTimeMillis() - 7_200_000L));
        Path recent = run.resolve("gateway-other.json");
        Files.writeString(recent, "{}");
        GatewayStatsFile f = new GatewayStatsFile(run, "gw-1", src, clock::get);
        f.write();
        JsonObject o = new JsonObject(Files.readString(f.file()));
        assertEquals("gw-1", o.getString("id"));
        assertEquals(3L, o.getLong("subscribers"));
        assertEquals(2L, o.getJsonObject("subscribersByCompression").getLong("none"));
        assertEquals(1L, o.getJsonObject("subscribersByCompression").getLong("zstd"));
        assertEquals("127.0.0.1:9", o.getString("address"));
        assertEquals(1_000_000_000L, o.getLong("updatedAt"));
        none.set(7);
        clock.addAndGet(5_000_000L);
        f.write();
        o = new JsonObject(Files.readString(f.file()));
        assertEquals(8L, o.getLong("subscribers"));
        assertEquals(1_005_000_000L, o.getLong("updatedAt"));
        try (var s = Files.list(run)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().endsWith(".tmp")), "the temporary file was renamed");
        }
        GatewayStatsFile g = new GatewayStatsFile(run, "gw-2", src, () -> System.currentTimeMillis() * 1000);
        g.start();
        for (int i = 0; i < 100 && !Files.exists(g.file()); i++) {
            Thread.sleep(20);
        }
        assertTrue(Files.exists(g.file()));
        assertFalse(Files.exists(leftover), "an hour-old file of a killed gateway is removed");
        assertTrue(Files.exists(recent), "a live gateway's file stays");
        g.close();
        assertFalse(Files.exists(g.file()), "a graceful stop removes its file");
        assertThrows(IllegalArgumentException.class, () -> new GatewayStatsFile(run, "../x", src, clock::get));
    }
}
