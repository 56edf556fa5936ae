package jetstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SegmentCommandsTest {
    @TempDir
    Path dir;

    private static Path golden() {
        Path root = Path.of(System.getProperty("jetstream.root", "..")).toAbsolutePath().normalize();
        Path p = root.resolveSibling("shared").resolve("vectors/jetstream-corpus/golden_corpus_segment.jss");
        assertTrue(Files.exists(p), "vector missing: " + p);
        return p;
    }

    /** Two sealed files and one active file: seqs 1..60, 10 rows per block, 3 DIDs. */
    private void writeDirectory() throws Exception {
        SegmentWriter w = SegmentWriter.open(SegmentIO.PRODUCTION, dir,
                new SegmentWriter.Config(10, 1L << 30, Duration.ZERO), System::nanoTime, new SegmentWriter.Listener() {});
        for (long s = 1; s <= 60; s++) {
            byte[] did = ("did:plc:user" + (s % 3)).getBytes(StandardCharsets.US_ASCII);
            int kind = s % 10 == 0 ? 4 : 1;
            byte[] coll = kind == 1 ? (s % 2 == 0 ? "app.bsky.feed.post" : "app.bsky.feed.like")
                    .getBytes(StandardCharsets.US_ASCII) : null;
            w.append(s, 1_750_000_000_000_000L + s, 0, kind, did, coll, kind == 1 ? ("r" + s).getBytes() : null,
                    "3abc".getBytes(), ("payload " + s).getBytes());
            if (s == 20 || s == 40) {
                w.forceRotate();
            }
        }
        w.close();
    }

    @Test
    void inspectsTheGoGoldenSegment() {
        CliRun r = CliRun.of("inspect", golden().toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("state: sealed"), r.out());
        assertTrue(r.out().contains("checksum: 8ac51e3e2c8fb641 (verified)"), r.out());
        assertTrue(r.out().contains("blocks: 3  events: 23  unique DIDs: 1"), r.out());
        assertTrue(r.out().contains("seq: 1..23"), r.out());
        assertTrue(r.out().contains("witnessed_at: 1750000000000001..1750000000000023"), r.out());
        assertTrue(r.out().contains("collections: 5"), r.out());
        assertTrue(r.out().matches("(?s).*app\\.bsky\\.feed\\.like\\s+10 .*"), r.out());
        assertTrue(r.out().matches("(?s).*app\\.bsky\\.graph\\.follow\\s+3 .*"), r.out());
        assertTrue(r.out().contains("compression: "), r.out());
        assertTrue(r.out().contains("DIDs: 1 (list them with --dids)"), r.out());
        assertEquals(3, r.out().lines().filter(l -> l.matches("\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+ .*")).count(), r.out());
        CliRun dids = CliRun.of("inspect", golden().toString(), "--dids");
        assertEquals(0, dids.exit());
        assertTrue(dids.out().matches("(?s).*DIDs: 1\\n  did:.*"), dids.out());
    }

    @Test
    void inspectsActiveFilesSayingSoAndNotingATornTail() throws Exception {
        writeDirectory();
        Path active = dir.resolve(SegmentName.format(2));
        Files.write(active, new byte[] {9, 0, 0}, java.nio.file.StandardOpenOption.APPEND);
        CliRun r = CliRun.of("inspect", active.toString(), "--dids");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("state: active"), r.out());
        assertTrue(r.out().contains("blocks: 2  events: 20  unique DIDs: 3"), r.out());
        assertTrue(r.out().contains("torn tail: 3 bytes"), r.out());
        assertTrue(r.out().contains("seq: 41..60"), r.out());
        assertTrue(r.out().matches("(?s).*\\$identity\\s+\\(marker\\)\\s+in 2 block\\(s\\).*"), r.out());
        assertTrue(r.out().contains("  did:plc:user0"), r.out());
        byte[] before = Files.readAllBytes(active);
        CliRun.of("inspect", active.toString());
        assertEquals(before.length, Files.readAllBytes(active).length, "inspect must not modify the file");
        CliRun sealed = CliRun.of("inspect", dir.resolve(SegmentName.format(0)).toString());
        assertTrue(sealed.out().contains("blocks: 2  events: 20  unique DIDs: 3"), sealed.out());
    }

    @Test
    void verifiesADirectoryAndReportsEachBadFileOnOneLine() throws Exception {
        writeDirectory();
        CliRun ok = CliRun.of("verify", dir.toString());
        assertEquals(0, ok.exit(), ok.out() + ok.err());
        assertTrue(ok.out().contains(SegmentName.format(0) + ": ok (sealed, 2 blocks, 20 events)"), ok.out());
        assertTrue(ok.out().contains(SegmentName.format(2) + ": ok (active, 2 blocks, 20 events)"), ok.out());
        assertTrue(ok.out().contains("3 file(s), 0 bad"), ok.out());
        assertEquals(0, CliRun.of("verify", golden().toString()).exit());

        Path first = dir.resolve(SegmentName.format(0));
        byte[] bytes = Files.readAllBytes(first);
        bytes[bytes.length - 2] ^= 0x10;
        Files.write(first, bytes);
        Files.write(dir.resolve("notes.txt"), new byte[] {1});
        CliRun bad = CliRun.of("verify", dir.toString());
        assertEquals(1, bad.exit());
        assertTrue(bad.out().contains(first + ": FAIL CHECKSUM_MISMATCH"), bad.out());
        assertEquals(1, bad.out().lines().filter(l -> l.contains("FAIL")).count(), bad.out());
        assertTrue(bad.out().contains("3 file(s), 1 bad"), bad.out());

        Files.copy(dir.resolve(SegmentName.format(2)), dir.resolve(SegmentName.format(3)));
        Files.write(dir.resolve(SegmentName.format(3)), new byte[300]);
        CliRun worse = CliRun.of("verify", dir.toString());
        assertEquals(1, worse.exit());
        assertTrue(worse.out().contains(SegmentName.format(2) + ": FAIL ACTIVE_SEGMENT"), worse.out());
        assertTrue(worse.out().contains(SegmentName.format(3) + ": FAIL CORRUPT_SEGMENT"), worse.out());
        assertTrue(worse.out().contains("4 file(s), 3 bad"), worse.out());
    }

    @Test
    void usageErrors() {
        assertEquals(2, CliRun.of("verify").exit());
        assertEquals(2, CliRun.of("inspect").exit());
        assertEquals(2, CliRun.of("inspect", "a", "b").exit());
        CliRun missing = CliRun.of("verify", dir.resolve("nope.jss").toString());
        assertEquals(1, missing.exit());
        assertTrue(missing.out().contains("FAIL IO:"), missing.out());
        assertTrue(CliRun.of("help", "inspect").out().startsWith("Usage: jetstream inspect [-hV] [--dids] SEGMENT_FILE"));
        assertTrue(CliRun.of("help", "verify").out().startsWith("Usage: jetstream verify [-hV] SEGMENT_FILE|DIR..."));
    }
}
