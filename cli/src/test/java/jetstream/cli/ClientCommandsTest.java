package jetstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jetstream.client.FakeServer;
import jetstream.client.TestArchive;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The network commands through {@link Main#run}, against the in-process fake server; stderr is not a TTY here. */
@Timeout(60)
@Tag("component")
class ClientCommandsTest {
    @TempDir
    Path dir;

    private FakeServer server;

    @BeforeEach
    void start() throws Exception {
        Path segs = Files.createDirectories(dir.resolve("segments"));
        server = new FakeServer(new TestArchive(segs, 400, 300, 16, 3_000));
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private record Run(int exit, List<String> out, String err) {}

    private static Run run(String... args) {
        CliRun r = CliRun.of(args);
        return new Run(r.exit(), r.lines(), r.err());
    }

    private static long seq(String line) {
        int i = line.lastIndexOf("\"seq\":");
        int j = line.indexOf(',', i);
        return Long.parseLong(line.substring(i + 6, j));
    }

    @Test
    void backfillSnapshotWritesEveryArchivedEventAndPlainProgressLines() {
        Run r = run("backfill", "--host", server.host(), "--snapshot-only", "--since-seq", "0", "--before-seq", "300",
                "--progress-every", "0.05");
        assertEquals(0, r.exit, r.err);
        assertEquals(300, r.out.size());
        for (int i = 0; i < 300; i++) {
            assertEquals(i + 1, seq(r.out.get(i)));
            assertTrue(r.out.get(i).startsWith("{\"$type\":\"network.bsky.jetstream.subscribeEvents#"));
        }
        assertTrue(r.err.contains("backfill: done: pages 1, units "), r.err);
        assertTrue(r.err.contains("events 300 (0 live)"), r.err);
        assertFalse(r.err.contains("\r"), "no terminal control codes when not a TTY");
    }

    @Test
    void quietBackfillToAFileWithFiltersPrintsNothingOnStderr() throws Exception {
        Path out = dir.resolve("out.jsonl");
        Run r = run("backfill", "--host", server.host(), "--snapshot-only", "--since-seq", "100", "--before-seq", "250",
                "--collections", "app.bsky.feed.*", "--dids", "did:plc:alice", "--out", out.toString(), "--quiet");
        assertEquals(0, r.exit, r.err);
        assertEquals("", r.err);
        assertTrue(r.out.isEmpty());
        List<String> lines = Files.readAllLines(out);
        long want = server.archive.rows.stream().filter(x -> x.seq() > 100 && x.seq() <= 250
                && x.did().equals("did:plc:alice") && (x.collection().startsWith("app.bsky.feed.") || x.kind() >= 4 && x.kind() <= 6))
                .count();
        assertTrue(want > 5);
        assertEquals(want, lines.size());
        assertTrue(lines.stream().allMatch(l -> l.contains("\"did\":\"did:plc:alice\"")));
    }

    @Test
    void subscribeFromACursorStopsAtTheLimit() {
        Run r = run("subscribe", "--host", server.host(), "--cursor", "150", "--limit", "50", "--no-zstd");
        assertEquals(0, r.exit, r.err);
        assertEquals(50, r.out.size());
        assertEquals(151, seq(r.out.get(0)));
        assertEquals(200, seq(r.out.get(49)));
        assertTrue(r.err.contains("subscribe: done:"), r.err);
    }

    @Test
    void backfillThenLiveCrossesTheCutover() {
        Run r = run("backfill", "--host", server.host(), "--limit", "400", "--quiet");
        assertEquals(0, r.exit, r.err);
        assertEquals(400, r.out.size());
        for (int i = 0; i < 400; i++) {
            assertEquals(i + 1, seq(r.out.get(i)));
        }
    }

    @Test
    void planPrintsOneLinePerEntryAndASummary() {
        Run r = run("plan", "--host", server.host(), "--collections", "app.bsky.graph.follow", "--dids", "did:plc:bob");
        assertEquals(0, r.exit, r.err);
        assertFalse(r.out.isEmpty());
        assertTrue(r.out.stream().allMatch(l -> l.startsWith("{\"name\":\"seg_") && l.contains("\"mode\":\"")), r.out.toString());
        assertTrue(r.err.startsWith("plan: 1 page(s), sealedTipSeq 300, plannedThroughSeq 300"), r.err);
    }

    @Test
    void errorsNameTheProblemAndSetTheExitCode() {
        Run badFilter = run("backfill", "--host", server.host(), "--collections", "app.*");
        assertEquals(2, badFilter.exit);
        assertTrue(badFilter.err.contains("invalid collection wildcard: app.*"), badFilter.err);

        Run badHost = run("subscribe", "--host", "ftp://example.com");
        assertEquals(2, badHost.exit);
        assertTrue(badHost.err.contains("unsupported scheme"), badHost.err);

        Run badFlag = run("plan", "--host", server.host(), "--cursor", "3");
        assertEquals(2, badFlag.exit);
        assertTrue(badFlag.err.contains("Unknown options: '--cursor', '3'"), badFlag.err);

        server.fail("planSnapshot", 1, 400);
        Run rejected = run("backfill", "--host", server.host(), "--snapshot-only");
        assertEquals(1, rejected.exit);
        assertTrue(rejected.err.contains("server error ServiceUnavailable: injected (HTTP 400)"), rejected.err);

        Run down = run("plan", "--host", "127.0.0.1:1", "--max-attempts", "1");
        assertEquals(1, down.exit);
        assertTrue(down.err.contains("failed after 1 attempts"), down.err);
    }
}
