package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jetstream.ingester.store.MetaStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The three passes over every {@code repo/} row (bootstrap recovery, the merge's pending pass, the
 * failed-repo retrier) run in a child JVM whose heap is smaller than the rows as a list (~450 bytes
 * a row): by default 40,000 rows (~18 MB as a list) in 16 MB; under {@code -Pscale} 200,000 rows
 * (~90 MB) in 48 MB. A pass that collects the rows dies of OutOfMemoryError; a streaming pass
 * finishes and handles the few rows that are due.
 */
@Tag("component")
class RepoPassesSmallHeapTest {
    private static final int ROWS = Integer.getInteger("jetstream.repopasses.rows", 40_000);
    private static final String HEAP = System.getProperty("jetstream.repopasses.heap", "16m");
    private static final int DUE = 3;

    @Test
    @Timeout(240)
    void recoverPromotesEveryNotStartedRowInASmallHeap(@TempDir Path dir) throws Exception {
        String upstream = closedPort();
        Path data = seed(dir, upstream, RepoStatus.Status.NOT_STARTED, 0);
        assertEquals("DONE recover pending=" + ROWS + " failed=0 complete=0", child(data, "recover", upstream));
        try (MetaStore store = MetaStore.open(data)) {
            long[] pending = {0};
            store.forEach(RepoStatus.KEY_PREFIX, (k, v) -> {
                String did = new String(k, StandardCharsets.UTF_8).substring(RepoStatus.KEY_PREFIX.length());
                if (RepoStatus.parse(did, v).status() == RepoStatus.Status.PENDING) {
                    pending[0]++;
                }
            });
            assertEquals(ROWS, pending[0], "every promotion is durable");
        }
    }

    @Test
    @Timeout(240)
    void pendingPassStreamsInASmallHeap(@TempDir Path dir) throws Exception {
        String upstream = closedPort();
        Path data = seed(dir, upstream, RepoStatus.Status.COMPLETE, DUE);
        assertEquals("DONE pending pending=0 failed=" + DUE + " complete=" + ROWS, child(data, "pending", upstream));
    }

    @Test
    @Timeout(240)
    void retrierPassStreamsInASmallHeap(@TempDir Path dir) throws Exception {
        String upstream = closedPort();
        Path data = seed(dir, upstream, RepoStatus.Status.FAILED, DUE);
        String done = child(data, "retrier", upstream);
        assertEquals("DONE retrier candidates=" + DUE, done.substring(0, done.indexOf(" failed=")),
                "only the due rows are candidates: " + done);
    }

    /**
     * {@code ROWS} rows of {@code bulk} status (failed ones not due for a day), then {@code due}
     * rows the pass must handle: pending for the pending pass, due failed rows for the retrier.
     */
    private static Path seed(Path dir, String upstream, RepoStatus.Status bulk, int due) {
        Path data = dir.resolve("data");
        String pds = upstream.substring("http://".length());
        Instant now = Instant.now();
        try (MetaStore store = MetaStore.open(data)) {
            for (int i = 0; i < ROWS + due; i += 10_000) {
                try (MetaStore.Batch b = store.batch()) {
                    for (int j = i; j < Math.min(ROWS + due, i + 10_000); j++) {
                        boolean isDue = j >= ROWS;
                        RepoStatus r = RepoStatus.discovered(String.format("did:plc:heap%016d", j), pds, now)
                                .lastError("http 503: upstream overloaded, retry later").attempts(2);
                        if (bulk == RepoStatus.Status.FAILED) {
                            r.status(RepoStatus.Status.FAILED).nextAttemptAt(isDue ? now : now.plus(Duration.ofDays(1)));
                        } else if (isDue) {
                            r.status(RepoStatus.Status.PENDING);
                        } else {
                            r.status(bulk);
                        }
                        b.put(r.key(), r.toJson());
                    }
                    b.commit();
                }
            }
        }
        return data;
    }

    private static String closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return "http://127.0.0.1:" + s.getLocalPort();
        }
    }

    private static String child(Path data, String pass, String upstream) throws Exception {
        Path log = data.getParent().resolve(pass + ".log");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx" + HEAP,
                "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), RepoPassesChild.class.getName(),
                data.toString(), pass, upstream);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        String done = null;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String l; (l = r.readLine()) != null; ) {
                if (l.startsWith("DONE ")) {
                    done = l;
                }
            }
        } finally {
            if (!p.waitFor(3, TimeUnit.MINUTES)) {
                p.destroyForcibly();
            }
        }
        assertNotNull(done, pass + " pass did not finish in " + HEAP + ": " + Files.readString(log));
        return done;
    }
}
