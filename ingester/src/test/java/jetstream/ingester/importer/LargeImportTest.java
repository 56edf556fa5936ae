package jetstream.ingester.importer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A large CSV ({@code jetstream.import.rows}: 20 000 in the default suite, 1 000 000 with
 * {@code -Plong}) imported by a child JVM capped at a 64 MiB heap: the job must complete, so its
 * memory does not grow with the file. Prints time and peak RSS (BENCHMARKS.md).
 */
@Tag("component")
class LargeImportTest {
    @TempDir
    Path data;

    @Test
    void aLargeCsvImportsWithinASmallFixedHeap() throws Exception {
        int rows = Integer.getInteger("jetstream.import.rows", 20_000);
        int perDid = 10;
        int dids = rows / perDid;
        int archived = 0;
        try (ImportHarness h = new ImportHarness(data, 64, 8 << 10)) {
            // the archive holds every 500th DID of the CSV: 5 records each, created then updated
            for (int v = 0; v < 2; v++) {
                List<ArchiveRow> batch = new ArrayList<>();
                for (int d = 0; d < dids; d += 500) {
                    for (int r = 0; r < 5; r++) {
                        byte[] p = ("rec " + d + "/" + r + " v" + v).getBytes(StandardCharsets.UTF_8);
                        batch.add(new ArchiveRow(v == 0 ? ArchiveRow.KIND_CREATE : ArchiveRow.KIND_UPDATE, did(d),
                                "app.bsky.feed.post", rkey(r), "3lrev" + v, new ByteSlice(p, 0, p.length)));
                        archived++;
                    }
                    if (batch.size() >= 500) {
                        h.append(batch);
                        batch = new ArrayList<>();
                    }
                }
                h.append(batch);
            }
        }
        Path csv = data.resolve("imports/big.csv");
        try (BufferedWriter w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8)) {
            w.write("uri,timestamp,scope,cid\n");
            for (int d = 0; d < dids; d++) {
                for (int r = 0; r < perDid; r++) {
                    w.write("at://" + did(d) + "/app.bsky.feed.post/" + rkey(r) + ",2023-0" + (1 + r % 9)
                            + "-02T03:04:05.678901Z,all_versions,\n");
                }
            }
        }
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), LargeImportChild.class.getName(),
                data.toString(), "big.csv");
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(
                data.resolve("child.log").toFile())).start();
        String done = null;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                if (l.startsWith("DONE ")) {
                    done = l;
                }
            }
        } finally {
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
            }
        }
        Files.copy(data.resolve("child.log"), Path.of("target/large-import-child.log"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertTrue(done != null, "the child finished: " + Files.readString(data.resolve("child.log")));
        String[] f = done.split(" ");
        assertEquals("complete", f[1], done);
        assertEquals(rows, Long.parseLong(f[2]));
        assertEquals(rows, Long.parseLong(f[3]));
        assertEquals(archived, Long.parseLong(f[4]), "every archived row of a listed URI was stamped");
        System.out.printf("import of %d rows (%d MiB CSV): %d ms (floor: one read of the CSV %d ms, ratio %.0f×), "
                        + "peak RSS %d MiB, peak heap %d MiB (-Xmx64m)%n", rows, Files.size(csv) >> 20,
                Long.parseLong(f[5]), Long.parseLong(f[8]), Double.parseDouble(f[5]) / Long.parseLong(f[8]),
                Long.parseLong(f[6]) >> 10, Long.parseLong(f[7]) >> 20);
    }

    static String did(int d) {
        return String.format("did:plc:large%08d", d);
    }

    static String rkey(int r) {
        return "3kabc" + r;
    }
}
