package jetstream.ingester;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.UnaryOperator;
import jetstream.ingester.backfill.BackfillSettings;
import jetstream.ingester.phase.EngineBackfill;
import jetstream.ingester.phase.MergeTailCompaction;
import jetstream.ingester.phase.RepoStatusRows;

/**
 * The scale campaign's ingester ({@link ScaleCampaignTest}): the real core (bootstrap, merge,
 * steady state) with production-sized backfill settings against the simulator in the parent.
 * Prints {@code PROGRESS <phase> <repos done> <repos known> <heap used> <upstream cursor> <backfill
 * records> <process CPU ns> <RSS> <pending resyncs>} every second and, on
 * {@code stop}, closes and prints {@code CLOSED <peak heap> <peak RSS>} (bytes; RSS from
 * {@code VmHWM}). Args: dataDir, simulator URL, {@code host=url,...}.
 */
public final class ScaleIngesterChild {
    public static void main(String[] args) throws Exception {
        quietLogging();
        Path data = Path.of(args[0]);
        String sim = args[1];
        UnaryOperator<String> route = BootstrapChild.route(args[2]);
        // the reference's defaults, with the download pools sized for a 2-core box
        BackfillSettings backfill = BackfillSettings.builder(sim).globalDownloads(32).hostWorkersMax(8).maxActiveHosts(64)
                .batchSize(1000).checkpointInterval(Duration.ofSeconds(10)).hostRetryDelay(Duration.ofSeconds(5)).build();
        IngesterCore.Settings settings = IngesterCore.Settings.builder(data).upstream(sim, sim)
                .leaseSize(1 << 16).logBudgetBytes(64 << 20).pdsRoute(route)
                .backfill(EngineBackfill.factory(backfill, route), RepoStatusRows::new).mergeTail(MergeTailCompaction.NONE)
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngesterCore core = IngesterCore.open(settings, registry, t -> {
            t.printStackTrace();
            Runtime.getRuntime().halt(70);
        });
        Thread reporter = new Thread(() -> {
            try {
                while (true) {
                    System.out.println("PROGRESS " + core.phase().stored() + " " + value(registry,
                            "jetstream_backfill_progress_completed") + " " + value(registry, "jetstream_backfill_progress_total")
                            + " " + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() + " "
                            + value(registry, "jetstream_livestream_upstream_cursor") + " "
                            + value(registry, "jetstream_backfill_records_total") + " "
                            + ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                                    .getProcessCpuTime() + " " + procStatus("VmRSS:") + " " + pendingResyncs(core));
                    System.out.flush();
                    Thread.sleep(1000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "scale-reporter");
        reporter.setDaemon(true);
        reporter.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("stop")) {
            // only stop is understood
        }
        reporter.interrupt();
        core.close();
        long peakHeap = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peakHeap += pool.getPeakUsage().getUsed();
            }
        }
        System.out.println("CLOSED " + peakHeap + " " + procStatus("VmHWM:"));
        System.out.flush();
        System.exit(0);
    }

    /**
     * The root log level Quarkus gives the packaged ingester (INFO). Unconfigured, the JBoss log
     * manager's root level in a plain JVM is ALL, so the JDK HTTP client's debug loggers
     * ({@code jdk.internal.httpclient.debug}) report DEBUG enabled and format every internal
     * message before the handler drops it: about half of the HTTP client threads' CPU time, and a
     * quarter of this child's during the bootstrap (profiled with {@code BootstrapHttpBench}).
     */
    static void quietLogging() {
        org.jboss.logmanager.Logger.getLogger("").setLevel(java.util.logging.Level.INFO);
    }

    /** DIDs whose live events wait for a whole-repo replacement (held: not in the archive yet); 0 before the live consumer. */
    private static int pendingResyncs(IngesterCore core) {
        jetstream.ingester.live.LiveConsumer live = core.live();
        return live == null ? 0 : live.pendingResyncs();
    }

    /** A gauge's or counter's value, 0 while it is not registered. */
    private static long value(SimpleMeterRegistry registry, String name) {
        io.micrometer.core.instrument.Meter m = registry.find(name).meter();
        if (m == null) {
            return 0;
        }
        for (io.micrometer.core.instrument.Measurement v : m.measure()) {
            return (long) v.getValue();
        }
        return 0;
    }

    /** A size line of {@code /proc/self/status} ({@code VmRSS:}, {@code VmHWM:}) in bytes; -1 when unknown. */
    private static long procStatus(String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith(field)) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
