package jetstream.ingester;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import jetstream.segment.io.SegmentWriter;

/**
 * A child ingester process fed by the REAL live consumer: it subscribes to a relay (the test JVM's
 * simulator) with Sync 1.1 verification and the dev host map for resync getRepo. Prints
 * {@code READY} once open and {@code CONNECTED} once subscribed; {@code cursor} prints
 * {@code CURSOR <upstream seq handed to the writer>}; {@code stop} closes gracefully
 * ({@code CLOSED}). Args: dataDir, relay URL, eventsPerBlock.
 */
public final class LiveIngesterChild {
    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        String relay = args[1];
        int perBlock = Integer.parseInt(args[2]);
        DevHostMap hosts = DevHostMap.load("", relay + "/sim/hosts", HttpClient.newHttpClient(), Duration.ofSeconds(10));
        IngesterCore.Settings s = IngesterCore.Settings.builder(data).steadyOnly().upstream(relay, relay)
                .segments(new SegmentWriter.Config(perBlock, 64 << 10, Duration.ofMillis(200))).logBudgetBytes(8 << 20)
                .pdsRoute(hosts).build();
        IngesterCore core = IngesterCore.open(s, new SimpleMeterRegistry(), t -> {
            t.printStackTrace();
            Runtime.getRuntime().halt(70);
        });
        System.out.println("READY " + core.writer().log().nextSeq());
        System.out.flush();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (core.live().connects() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        System.out.println("CONNECTED " + core.live().connects());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("stop")) {
            if (line.equals("cursor")) {
                // caught up means nothing still held too: -1 while a DID waits for its key or a resync
                System.out.println("CURSOR " + (core.live().pendingResyncs() > 0 ? -1 : core.live().cursor()));
                System.out.flush();
            }
        }
        core.close();
        System.out.println("CLOSED");
        System.out.flush();
        System.exit(0);
    }
}
