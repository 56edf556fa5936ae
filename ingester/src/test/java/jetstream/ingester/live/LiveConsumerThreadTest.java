package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The relay-reading thread never dies quietly: ending while the consumer runs halts the process; a close does not. */
@Tag("unit")
class LiveConsumerThreadTest {
    @Test
    void theRelayThreadEndingWhileRunningIsFatal(@TempDir Path dir) throws Exception {
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        CountDownLatch fatal = new CountDownLatch(1);
        try (MetaStore store = MetaStore.open(dir)) {
            SteadyWriter writer = SteadyWriter.open(dir, store, new SegmentWriter.Config(16, 1 << 20, Duration.ofMillis(50)),
                    SegmentIO.PRODUCTION, 16, 1 << 20, () -> {}, metrics, t -> {
                        throw new AssertionError(t);
                    });
            HttpClient http = HttpClient.newHttpClient();
            // a closed port: the thread sits in its reconnect backoff
            LiveConsumer c = new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                    new IdentityResolver(http, "http://127.0.0.1:1", store, Duration.ofHours(24)), metrics, true, 2, () -> true,
                    u -> u, new HostnamePolicy(false), t -> fatal.countDown());
            c.start();
            Thread relay = thread("live-consumer");
            relay.interrupt();
            assertTrue(fatal.await(30, TimeUnit.SECONDS), "the thread's end was reported as fatal");
            c.close();

            CountDownLatch closedFatal = new CountDownLatch(1);
            LiveConsumer d = new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                    new IdentityResolver(http, "http://127.0.0.1:1", store, Duration.ofHours(24)), metrics, true, 2, () -> true,
                    u -> u, new HostnamePolicy(false), t -> closedFatal.countDown());
            d.start();
            Thread second = thread("live-consumer");
            d.close();
            assertFalse(second.isAlive(), "close joined the thread");
            assertTrue(closedFatal.getCount() == 1, "a close is not a failure");
            writer.close();
        }
    }

    /** The newest live thread called {@code name}. */
    private static Thread thread(String name) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            Thread newest = null;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals(name) && t.isAlive() && (newest == null || t.getId() > newest.getId())) {
                    newest = t;
                }
            }
            if (newest != null) {
                return newest;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no thread " + name);
    }
}
