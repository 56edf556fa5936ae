package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.feed.FeedFrame;
import jetstream.ingester.importer.ImportChild;
import jetstream.ingester.importer.ImportHarness;
import jetstream.ingester.importer.ImportJob;
import jetstream.ingester.store.MetaStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a child ingester in the middle of an import's apply phase, twice: the restarted
 * ingester resumes the job by itself, skips the checkpointed segments, and the archive ends equal
 * to an uninterrupted import of the same CSV on a copy of the same data.
 */
@Tag("crash")
class ImportCrashTest {
    @TempDir
    Path dir;

    @Test
    void killNineMidApplyResumesAndConverges() throws Exception {
        Path crashed = dir.resolve("crashed");
        Path reference = dir.resolve("reference");
        StringBuilder csv = new StringBuilder("uri,timestamp\n");
        try (ImportHarness h = new ImportHarness(crashed, 4, 600)) {
            for (int v = 0; v < 2; v++) {
                for (int d = 0; d < 40; d++) {
                    List<ArchiveRow> rows = new ArrayList<>();
                    String did = "did:plc:crash" + d + "zz";
                    for (int r = 0; r < 6; r++) {
                        byte[] p = ("record " + d + "/" + r + " v" + v).getBytes(StandardCharsets.UTF_8);
                        rows.add(new ArchiveRow(v == 0 ? ArchiveRow.KIND_CREATE : ArchiveRow.KIND_UPDATE, did,
                                "app.bsky.feed.post", "3k" + r + "abc", "3lrev" + v, new ByteSlice(p, 0, p.length)));
                        if (v == 0) {
                            csv.append("at://").append(did).append("/app.bsky.feed.post/3k").append(r).append("abc,20")
                                    .append(10 + r).append("-0").append(1 + d % 9).append("-01T00:00:00Z\n");
                        }
                    }
                    h.append(rows);
                }
            }
        }
        Files.writeString(crashed.resolve("imports/ts.csv"), csv);
        copy(crashed, reference);

        Path log = dir.resolve("child.log");
        String id;
        long segmentsToApply;
        try (ChildProcess c = new ChildProcess(ImportChild.class, log, crashed.toString(), "ts.csv")) {
            id = c.await("JOB ", 60).substring(4);
            c.await("APPLIED 1", 60);
            c.kill();
        }
        ImportJob mid = record(crashed, id);
        assertEquals(ImportJob.RUNNING, mid.state());
        assertTrue(mid.bucketed());
        segmentsToApply = mid.segmentsToApply();
        assertTrue(mid.segmentsApplied() >= 1 && mid.segmentsApplied() < segmentsToApply,
                "killed mid-apply: " + mid.segmentsApplied() + " of " + segmentsToApply);
        try (ChildProcess c = new ChildProcess(ImportChild.class, log, crashed.toString(), "-")) {
            assertEquals("JOB " + id, c.await("JOB ", 60));
            c.await("APPLIED " + (mid.segmentsApplied() + 1), 60);
            c.kill();
        }
        ImportJob mid2 = record(crashed, id);
        assertEquals(ImportJob.RUNNING, mid2.state());
        assertTrue(mid2.segmentsApplied() > mid.segmentsApplied(), "the resumed job kept the checkpoints");
        assertEquals(segmentsToApply, mid2.segmentsToApply(), "the resumed job did not bucket again");

        ImportJob end;
        try (ImportHarness h = new ImportHarness(crashed, 4, 600)) {
            end = h.await(id);
        }
        assertEquals(ImportJob.COMPLETE, end.state(), end.error());
        assertEquals(segmentsToApply, end.segmentsApplied());
        ImportJob ref;
        try (ImportHarness h = new ImportHarness(reference, 4, 600)) {
            ref = h.await(h.importer.submit("ts.csv"));
        }
        assertEquals(ImportJob.COMPLETE, ref.state());
        assertEquals(480, ref.rowsMutated());
        assertEquals(ref.rowsValid(), end.rowsValid());
        assertEquals(ref.rowsMatchedAllVersions(), end.rowsMatchedAllVersions(), "checkpointed counters add up");

        List<FeedFrame.Event> a = ImportHarness.sealedRows(crashed);
        List<FeedFrame.Event> b = ImportHarness.sealedRows(reference);
        assertEquals(b.size(), a.size());
        for (int i = 0; i < a.size(); i++) {
            assertEquals(b.get(i), a.get(i));
            assertTrue(a.get(i).indexedAt() > 0, "every row was stamped");
        }
    }

    private static ImportJob record(Path data, String id) throws Exception {
        try (MetaStore s = MetaStore.open(data)) {
            return ImportJob.decode(s.get("import/job/" + id + "/meta"));
        }
    }

    private static void copy(Path from, Path to) throws Exception {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else if (!p.getFileName().toString().endsWith(".sock")) {
                    Files.copy(p, t);
                }
            }
        }
    }
}
