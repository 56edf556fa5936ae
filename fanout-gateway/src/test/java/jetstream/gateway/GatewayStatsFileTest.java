package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.vertx.core.json.JsonObject;

/**
 * The stats file the status page reads: content, replacement by rename, leftovers, removal, and a
 * writer killed by an Error (an OutOfMemoryError under a flood) restarted instead of going stale.
 */
@Tag("unit")
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

    @Test
    void aWriterKilledByAnErrorIsReportedDeadAndRestarted() throws Exception {
        AtomicBoolean flood = new AtomicBoolean();
        AtomicLong clock = new AtomicLong(1);
        GatewayStatsFile.Source src = new GatewayStatsFile.Source() {
            @Override
            public long subscribers() {
                if (flood.getAndSet(false)) {
                    throw new OutOfMemoryError("Java heap space (test)");
                }
                return 1;
            }

            @Override
            public long subscribers(SubscribeMetrics.Compression c) {
                return 0;
            }

            @Override
            public boolean feedConnected() {
                return true;
            }

            @Override
            public String address() {
                return "";
            }
        };
        Path run = dir.resolve("run");
        GatewayStatsFile f = new GatewayStatsFile(run, "gw-oom", src, clock::incrementAndGet, 20);
        f.start();
        try {
            for (int i = 0; i < 250 && !Files.exists(f.file()); i++) {
                Thread.sleep(20);
            }
            assertTrue(f.watch(System.nanoTime()), "a running writer is alive");
            flood.set(true);
            for (int i = 0; i < 250 && flood.get(); i++) {
                Thread.sleep(20);
            }
            assertFalse(flood.get(), "the writer met the error");
            Thread.sleep(100);
            long dead = updatedAt(f);
            Thread.sleep(200);
            assertEquals(dead, updatedAt(f), "a scheduled task that threw an Error never runs again");
            assertFalse(f.watch(System.nanoTime()), "the dead writer is reported (readiness false)");
            assertEquals(1, f.restarts());
            for (int i = 0; i < 250 && updatedAt(f) == dead; i++) {
                Thread.sleep(20);
            }
            assertTrue(updatedAt(f) > dead, "the restarted writer publishes again");
            assertTrue(f.watch(System.nanoTime()), "alive again");
            assertEquals(1, f.restarts());
        } finally {
            f.close();
        }
        assertFalse(f.watch(System.nanoTime()), "a closed writer is not alive and not restarted");
    }

    private static long updatedAt(GatewayStatsFile f) throws Exception {
        return new JsonObject(Files.readString(f.file())).getLong("updatedAt");
    }
}
