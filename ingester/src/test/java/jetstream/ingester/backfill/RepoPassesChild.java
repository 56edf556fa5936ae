package jetstream.ingester.backfill;

import java.nio.file.Path;
import java.time.Duration;
import java.util.function.UnaryOperator;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;

/**
 * Child JVM of {@link RepoPassesSmallHeapTest}: runs one pass over the {@code repo/} rows of a
 * data directory in a small heap and prints {@code DONE <pass> <counts>}. The upstream is a closed
 * loopback port, so the few rows a pass downloads fail fast with no network.
 */
public final class RepoPassesChild {
    private RepoPassesChild() {}

    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        String pass = args[1];
        String upstream = args[2];
        IngestMetrics metrics = BackfillFixture.metrics();
        BackfillSettings s = BackfillFixture.settings(upstream).toBuilder().upstreamMode(BackfillSettings.UpstreamMode.PDS)
                .allowLoopback(true).retryInterval(Duration.ofHours(1)).build();
        UnaryOperator<String> route = UnaryOperator.identity();
        try (MetaStore store = MetaStore.open(data);
             SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics)) {
            switch (pass) {
                case "recover", "pending" -> {
                    try (BackfillEngine engine = new BackfillEngine(s, BackfillFixture.client(), store, writer, metrics,
                            route)) {
                        engine.recover();
                        if (pass.equals("pending")) {
                            engine.pendingRetryPass();
                        }
                        BackfillProgress p = engine.progress();
                        System.out.println("DONE " + pass + " pending=" + p.pending() + " failed=" + p.failed()
                                + " complete=" + p.complete());
                    }
                }
                case "retrier" -> {
                    try (FailedRepoRetrier r = new FailedRepoRetrier(s, BackfillFixture.client(), store, writer, metrics,
                            route)) {
                        FailedRepoRetrier.Pass p = r.runPass();
                        System.out.println("DONE retrier candidates=" + p.candidates() + " failed=" + p.failed()
                                + " parked=" + p.skippedHostParked());
                    }
                }
                default -> throw new IllegalArgumentException(pass);
            }
            writer.flushDurable(java.util.Map.of());
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
