package jetstream.ingester;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import jetstream.feed.LifecyclePhase;

/**
 * A child ingester for the bootstrap/merge crash tier: the real core with the real backfill engine
 * against a simulator running in the parent. Prints {@code READY <phase>} once open,
 * {@code PHASE <phase>} on every change; on {@code catchup <seq>} prints {@code CAUGHT} once the
 * steady live consumer handed relay seq {@code seq} to the writer; on {@code stop} closes
 * gracefully and prints {@code CLOSED}. Args: dataDir, simulator URL, {@code host=url,...}.
 */
public final class BootstrapChild {
    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        String sim = args[1];
        UnaryOperator<String> route = route(args[2]);
        IngesterCore core = IngesterCore.open(BootstrapMergeComponentTest.settings(data, sim, route),
                new SimpleMeterRegistry(), t -> {
                    t.printStackTrace();
                    Runtime.getRuntime().halt(70);
                });
        LifecyclePhase[] last = {core.phase()};
        System.out.println("READY " + last[0].stored());
        System.out.flush();
        Thread watcher = new Thread(() -> {
            while (true) {
                LifecyclePhase p = core.phase();
                if (p != last[0]) {
                    last[0] = p;
                    System.out.println("PHASE " + p.stored());
                    System.out.flush();
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "phase-watcher");
        watcher.setDaemon(true);
        watcher.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("stop")) {
            if (line.startsWith("catchup ")) {
                long head = Long.parseLong(line.substring("catchup ".length()));
                // caught up: the cursor at the head and no event still held (a first sighting waits for its key)
                while (core.phase() != LifecyclePhase.STEADY_STATE || core.live() == null || core.live().cursor() < head
                        || core.live().pendingResyncs() > 0) {
                    Thread.sleep(20);
                }
                System.out.println("CAUGHT");
                System.out.flush();
            }
        }
        watcher.interrupt();
        core.close();
        System.out.println("CLOSED");
        System.out.flush();
        System.exit(0);
    }

    /** The dev host map of a child's {@code host=url,...} argument. */
    static UnaryOperator<String> route(String hostsArg) {
        Map<String, String> hosts = new HashMap<>();
        for (String kv : hostsArg.split(",")) {
            int eq = kv.indexOf('=');
            hosts.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return url -> {
            String h = URI.create(url).getHost();
            String mapped = h == null ? null : hosts.get(h);
            return mapped != null ? mapped : url;
        };
    }
}
