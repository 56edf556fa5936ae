package jetstream.ops;

import jetstream.config.BuildInfo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import jetstream.config.ListenAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class OpsDiagnosticsTest {
    @TempDir
    Path tmp;

    /** Runs in a child JVM: a parked thread exists, then the crash-loud path runs. */
    public static final class Child {
        public static void main(String[] args) throws InterruptedException {
            Thread parked = new Thread(() -> {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "parked-witness");
            parked.setDaemon(true);
            parked.start();
            Thread.sleep(100);
            CrashReport.haltAfterReport("segment write failed: No space left on device (ENOSPC)",
                    new IllegalStateException("disk full"), 70);
        }
    }

    @Test
    void crashReportHasEveryThreadAndBuildMetadata() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "waiting-witness");
        t.start();
        try {
            String r = CrashReport.render("test reason", new RuntimeException("boom"));
            assertTrue(r.contains("reason: test reason"));
            assertTrue(r.contains("java.lang.RuntimeException: boom"));
            assertTrue(r.contains("version=" + BuildInfo.current().version()));
            assertFalse(BuildInfo.current().version().contains("${"), "the build filtered the version in");
            assertTrue(r.contains("\"waiting-witness\""), "another thread's stack is in the report");
            assertTrue(r.contains("java.util.concurrent.CountDownLatch.await"), "full stacks, not 8 frames");
            assertTrue(r.contains("\"main\"") || r.contains("\"" + Thread.currentThread().getName() + "\""));
        } finally {
            hold.countDown();
            t.join();
        }
    }

    @Test
    void haltAfterReportWritesTheReportThenExits() throws Exception {
        Path err = tmp.resolve("stderr.txt");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-cp", System.getProperty("java.class.path"), Child.class.getName())
                .redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(70, p.exitValue());
        String s = Files.readString(err);
        assertTrue(s.contains("reason: segment write failed: No space left on device (ENOSPC)"), s);
        assertTrue(s.contains("\"parked-witness\""), s);
        assertTrue(s.contains("commit="), s);
        assertTrue(s.contains("=== end of crash report ==="), s);
    }

    @Test
    void uncaughtHandlerReportsWithoutExiting() throws Exception {
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        java.io.PrintStream errBefore = System.err;
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        try {
            System.setErr(new java.io.PrintStream(buf, true, "UTF-8"));
            CrashReport.installUncaughtHandler();
            Thread t = new Thread(() -> {
                throw new IllegalStateException("escaped");
            }, "escaping-thread");
            t.start();
            t.join();
        } finally {
            System.setErr(errBefore);
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
        String s = buf.toString("UTF-8");
        assertTrue(s.contains("uncaught exception in thread \"escaping-thread\""), s);
        assertTrue(s.contains("IllegalStateException: escaped"), s);
        assertTrue(s.contains("--- all threads ---"), s);
    }

    @Test
    void debugServerServesProbesMetricsAndDiagnostics() throws Exception {
        AtomicBoolean ready = new AtomicBoolean(false);
        try (DebugServer d = DebugServer.start(new ListenAddress("127.0.0.1", 0), new DebugServer.Probes() {
            @Override
            public boolean live() {
                return true;
            }

            @Override
            public boolean ready() {
                return ready.get();
            }

            @Override
            public String metrics() {
                return "# TYPE jetstream_test gauge\njetstream_test 1.0\n";
            }
        })) {
            HttpClient c = HttpClient.newHttpClient();
            assertEquals(List.of(200, "ok\n"), get(c, d, "/healthz"));
            assertEquals(List.of(503, "not ready\n"), get(c, d, "/readyz"));
            ready.set(true);
            assertEquals(List.of(200, "ok\n"), get(c, d, "/readyz"));
            assertTrue(((String) get(c, d, "/metrics").get(1)).contains("jetstream_test 1.0"));
            String threads = (String) get(c, d, "/debug/threads").get(1);
            assertTrue(threads.contains("\"debug-listener-"), threads);
            List<Object> heap = get(c, d, "/debug/heap?all=true");
            assertEquals(200, heap.get(0));
            assertTrue(((String) heap.get(1)).contains("java.lang.String"), "class histogram lists classes");
            assertEquals(404, get(c, d, "/nope").get(0));
            HttpResponse<String> post = c.send(HttpRequest.newBuilder(uri(d, "/healthz"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode());
        }
    }

    private static URI uri(DebugServer d, String path) {
        return URI.create("http://127.0.0.1:" + d.port() + path);
    }

    private static List<Object> get(HttpClient c, DebugServer d, String path) throws IOException, InterruptedException {
        HttpResponse<String> r = c.send(HttpRequest.newBuilder(uri(d, path)).build(), HttpResponse.BodyHandlers.ofString());
        return List.of(r.statusCode(), r.body());
    }
}
