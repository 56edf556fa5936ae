package jetstream.ingester.importer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import jetstream.atproto.cid.Cid;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class ImportCsvTest {
    static final String DID = "did:plc:53iucmf5ldftgqyf2ac7hmhd";
    static final String CID = Cid.dagCborString(new byte[] {(byte) 0xa0}, 0, 1);

    @TempDir
    Path dir;

    private Path write(String content) throws IOException {
        Path p = dir.resolve("t" + System.nanoTime() + ".csv");
        Files.writeString(p, content, StandardCharsets.UTF_8);
        return p;
    }

    private List<ImportCsv.Parsed> all(Path p) throws Exception {
        List<ImportCsv.Parsed> out = new ArrayList<>();
        try (ImportCsv csv = ImportCsv.open(p)) {
            ImportCsv.Parsed r;
            while ((r = csv.next()) != null) {
                out.add(r);
            }
        }
        return out;
    }

    @Test
    void everyRejectReasonHasARow() throws Exception {
        String uri = "at://" + DID + "/app.bsky.feed.post/3k2a";
        String csv = "uri,timestamp,scope,cid\n"
                + uri + ",2022-01-02T03:04:05Z,,\n"                                       // valid all_versions
                + uri + ",2022-01-02T03:04:05.123456Z,specific_version," + CID + "\n"      // valid specific
                + "\"" + "x".repeat(ImportCsv.MAX_ROW_BYTES + 5) + "\",1,,\n"                // row_too_long
                + uri + ",2022-01-02T03:04:05Z\n"                                           // malformed_csv (3 fields short)
                + ",2022-01-02T03:04:05Z,,\n"                                               // missing_field (uri)
                + uri + ",,,\n"                                                             // missing_field (timestamp)
                + "http://" + DID + "/app.bsky.feed.post/3k2a,2022-01-02T03:04:05Z,,\n"     // bad_uri
                + "at://alice.example.com/app.bsky.feed.post/3k2a,2022-01-02T03:04:05Z,,\n" // uri_authority_not_did
                + "at://" + DID + "/app.bsky.feed.post,2022-01-02T03:04:05Z,,\n"            // uri_missing_collection_or_rkey
                + uri + ",yesterday,,\n"                                                    // bad_timestamp
                + uri + ",1969-12-31T23:59:59Z,,\n"                                         // non_positive_timestamp
                + uri + ",2022-01-02T03:04:05Z,latest,\n"                                   // unknown_scope
                + uri + ",2022-01-02T03:04:05Z,specific_version,\n"                         // specific_version_missing_cid
                + uri + ",2022-01-02T03:04:05Z,specific_version,bogus\n"                    // bad_cid
                + "at://" + DID + "/not an nsid/3k2a,2022-01-02T03:04:05Z,,\n";             // bad_uri (collection)
        List<ImportCsv.Parsed> rows = all(write(csv));
        assertEquals(15, rows.size());
        assertEquals(1_641_092_645_000_000L, rows.get(0).row().timestampMicros());
        assertNull(rows.get(0).row().cid());
        assertEquals(1_641_092_645_123_456L, rows.get(1).row().timestampMicros());
        assertEquals(CID, rows.get(1).row().cid());
        List<String> reasons = rows.stream().skip(2).map(ImportCsv.Parsed::reject).toList();
        assertEquals(List.of("row_too_long", "malformed_csv", "missing_field", "missing_field", "bad_uri",
                "uri_authority_not_did", "uri_missing_collection_or_rkey", "bad_timestamp", "non_positive_timestamp",
                "unknown_scope", "specific_version_missing_cid", "bad_cid", "bad_uri"), reasons);
        assertEquals(new TreeSet<>(ImportCsv.REJECT_REASONS), new TreeSet<>(reasons), "every reason is exercised");
    }

    @Test
    void offsetsPointAtTheirRecordAndReadAtReparses() throws Exception {
        String h = "timestamp,uri\r\n";
        String a = "2022-01-02T03:04:05Z,at://" + DID + "/app.bsky.feed.post/a\r\n";
        String b = "\"2023-01-02T03:04:05Z\",\"at://" + DID + "/app.bsky.feed.post/b\"\n";
        String c = "2024-01-02T03:04:05Z,at://" + DID + "/app.bsky.feed.like/c";
        Path p = write(h + a + "\n" + b + c);
        List<ImportCsv.Parsed> rows = all(p);
        assertEquals(3, rows.size(), "the empty line is skipped");
        long[] want = {h.length(), h.length() + a.length() + 1, h.length() + a.length() + 1 + b.length()};
        try (ImportCsv csv = ImportCsv.open(p)) {
            for (int i = 2; i >= 0; i--) {
                assertEquals(want[i], rows.get(i).offset());
                ImportCsv.Parsed again = csv.readAt(want[i]);
                assertEquals(rows.get(i).row(), again.row());
            }
            assertEquals("c", csv.readAt(want[2]).row().rkey());
            assertNull(csv.readAt(want[2] + 1000), "past the end nothing parses");
        }
    }

    @Test
    void quotedFieldsMayHoldCommasNewlinesAndQuotes() throws Exception {
        Path p = write("uri,timestamp,scope\n\"at://" + DID + "/app.bsky.feed.post/a\",2022-01-02T03:04:05Z,\"all_\"\"x\n,\"\n");
        List<ImportCsv.Parsed> rows = all(p);
        assertEquals(1, rows.size());
        assertEquals("unknown_scope", rows.get(0).reject(), "the scope field is all_\"x\\n,");
    }

    @Test
    void strictHeader() throws Exception {
        for (String bad : List.of("", "uri,timestamp,extra\n", "uri,uri,timestamp\n", "uri,scope\n", "Uri,timestamp\n")) {
            Path p = write(bad);
            assertThrows(ImportCsv.Abort.class, () -> ImportCsv.open(p).close(), bad);
        }
        Path bom = write("\uFEFFtimestamp,uri\n2022-01-02T03:04:05Z,at://" + DID + "/app.bsky.feed.post/a\n");
        assertEquals(1, all(bom).stream().filter(r -> r.row() != null).count(), "a UTF-8 BOM before the header is accepted");
    }

    @Test
    void unclosedOrBareQuoteAbortsTheFile() throws Exception {
        String ok = "uri,timestamp\nat://" + DID + "/app.bsky.feed.post/a,2022-01-02T03:04:05Z\n";
        for (String tail : Set.of("\"at://" + DID + "/app.bsky.feed.post/b,2022-01-02T03:04:05Z\n",
                "at://" + DID + "/app.bsky.feed.post/b\"x,2022-01-02T03:04:05Z\n",
                "\"at://" + DID + "/app.bsky.feed.post/b\"x,2022-01-02T03:04:05Z\n")) {
            Path p = write(ok + tail + ok);
            ImportCsv.Abort e = assertThrows(ImportCsv.Abort.class, () -> all(p));
            assertTrue(e.getMessage().contains("quote"), e.getMessage());
        }
    }
}
