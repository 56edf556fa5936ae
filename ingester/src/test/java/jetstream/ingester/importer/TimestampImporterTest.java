package jetstream.ingester.importer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.json.JsonBuffer;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.wire.V1Json;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The import job end to end on a real core: both scopes, the append path, idempotence, feed notices, wire times. */
@Tag("component")
class TimestampImporterTest {
    static final String POST = "app.bsky.feed.post";
    static final long T_ALL = 1_588_748_889_123_456L;   // 2020-05-06T07:08:09.123456Z
    static final long T_SPECIFIC = 1_609_459_200_000_000L; // 2021-01-01T00:00:00Z
    static final long T_DELETED = 1_546_300_800_000_000L;  // 2019-01-01T00:00:00Z

    @TempDir
    Path data;

    static String did(int i) {
        return "did:plc:importtest" + (char) ('a' + i) + "xyz";
    }

    static byte[] record(String text) {
        return DagCbor.encode(Map.of("$type", POST, "text", text, "createdAt", "2024-01-01T00:00:00.000Z"));
    }

    static ArchiveRow row(int kind, String did, String rkey, String rev, byte[] payload) {
        return new ArchiveRow(kind, did, kind <= 3 || kind == 7 ? POST : "", kind <= 3 || kind == 7 ? rkey : "", rev,
                new ByteSlice(payload, 0, payload.length));
    }

    /** Creates, updates, a delete per DID and identity rows, spread over many small segments. */
    static void fill(ImportHarness h) throws Exception {
        for (int phase = 0; phase < 3; phase++) {
            for (int d = 0; d < 8; d++) {
                List<ArchiveRow> rows = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    String rkey = "3k" + r + "aaaaaaaa";
                    switch (phase) {
                        case 0 -> rows.add(row(ArchiveRow.KIND_CREATE, did(d), rkey, "3lrev0", record(d + "/" + r + " v1")));
                        case 1 -> rows.add(row(ArchiveRow.KIND_UPDATE, did(d), rkey, "3lrev1", record(d + "/" + r + " v2")));
                        default -> {
                            if (r == 3) {
                                rows.add(row(ArchiveRow.KIND_DELETE, did(d), rkey, "3lrev2", new byte[0]));
                            }
                        }
                    }
                }
                rows.add(row(ArchiveRow.KIND_IDENTITY, did(d), "", "", "{}".getBytes(StandardCharsets.UTF_8)));
                h.append(rows);
            }
        }
        h.core.writer().forceRotate();
    }

    static String uri(int d, int r) {
        return "at://" + did(d) + "/" + POST + "/3k" + r + "aaaaaaaa";
    }

    static String csv() {
        return "uri,timestamp,scope,cid\n"
                + uri(0, 0) + ",2020-05-06T07:08:09.123456Z,,\n"
                + uri(1, 1) + ",2021-01-01T00:00:00Z,specific_version," + Cid.dagCborString(record("1/1 v2"), 0,
                        record("1/1 v2").length) + "\n"
                + uri(2, 2) + ",2021-01-01T00:00:00Z,specific_version," + Cid.dagCborString(record("nope"), 0,
                        record("nope").length) + "\n"
                + uri(3, 3) + ",2019-01-01T00:00:00Z,all_versions,\n"
                + "at://did:plc:nobodyhere/" + POST + "/3kzz,2019-01-01T00:00:00Z,,\n"
                + "not-a-uri,2019-01-01T00:00:00Z,,\n"
                + uri(0, 0) + ",2020-05-06T07:08:09.123456Z,,\n";
    }

    /** The indexed_at every row must carry after the import. */
    static long expected(FeedFrame.Event e) {
        String did = new String(e.did(), StandardCharsets.UTF_8);
        String rkey = new String(e.rkey(), StandardCharsets.UTF_8);
        boolean record = e.kind() == ArchiveRow.KIND_CREATE || e.kind() == ArchiveRow.KIND_UPDATE;
        if (record && did.equals(did(0)) && rkey.startsWith("3k0")) {
            return T_ALL;
        }
        if (record && did.equals(did(3)) && rkey.startsWith("3k3")) {
            return T_DELETED;
        }
        if (e.kind() == ArchiveRow.KIND_UPDATE && did.equals(did(1)) && rkey.startsWith("3k1")) {
            return T_SPECIFIC;
        }
        return 0;
    }

    @Test
    void bothScopesPatchTheArchiveStampNewRowsAndRerunChangesNothing() throws Exception {
        try (ImportHarness h = new ImportHarness(data, 4, 600)) {
            fill(h);
            List<FeedFrame.Event> before = ImportHarness.sealedRows(data);
            assertTrue(SegmentName.scan(data.resolve("segments")).size() > 5, "many segments");
            Files.writeString(data.resolve("imports/ts.csv"), csv());
            try (FeedClient.Subscription feed = FeedClient.subscribe(
                    FeedClient.Options.defaults(data.resolve("run/feed.sock")), 0, 100_000)) {
                String id = h.importer.submit("ts.csv");
                assertTrue(id.matches("\\d{8}T\\d{6}\\.\\d{3}Z-[0-9a-f]{8}"), id);
                ImportJob job = h.await(id);
                assertEquals(ImportJob.COMPLETE, job.state(), job.error());
                assertEquals(7, job.rowsTotal());
                assertEquals(6, job.rowsValid());
                assertEquals(1, job.rowsRejected());
                assertEquals(Map.of("bad_uri", 1L), job.rejectsByReason());
                assertEquals(5, job.rowsMutated());
                assertEquals(4, job.rowsMatchedAllVersions());
                assertEquals(1, job.rowsMatchedSpecific());
                assertEquals(1, job.specificCidsUnmatched());
                assertEquals(0, job.rowsCorruptOffset());
                assertTrue(job.segmentsPatched() >= 2 && job.segmentsPatched() <= job.segmentsExamined(), job.statusJson()
                        .toString());
                assertEquals(job.segmentsToApply(), job.segmentsApplied());
                assertTrue(job.segmentsToApply() < SegmentName.scan(data.resolve("segments")).size(),
                        "the segment DID blooms ruled segments out");
                assertFalse(Files.exists(data.resolve("import-scratch").resolve(id)), "scratch is cleaned up");

                List<FeedFrame.Event> after = ImportHarness.sealedRows(data);
                assertEquals(before.size(), after.size());
                for (int i = 0; i < before.size(); i++) {
                    FeedFrame.Event b = before.get(i);
                    FeedFrame.Event a = after.get(i);
                    assertEquals(0, b.indexedAt());
                    assertEquals(new FeedFrame.Event(b.seq(), b.witnessedAt(), expected(b), b.kind(), b.did(),
                            b.collection(), b.rkey(), b.rev(), b.payload()), a, "row " + b.seq());
                }

                // readers were told which files changed (with their new checksums) and how the job went
                Map<String, Long> rewritten = new HashMap<>();
                boolean completeSeen = false;
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (System.nanoTime() < deadline && !(completeSeen && rewritten.size() == job.segmentsPatched())) {
                    FeedFrame f = feed.poll(Duration.ofMillis(200));
                    if (f instanceof FeedFrame.SegmentRewritten s) {
                        rewritten.put(s.name(), s.checksum());
                    } else if (f instanceof FeedFrame.ImportStatus s && s.jobId().equals(id)
                            && s.state().equals(ImportJob.COMPLETE)) {
                        completeSeen = true;
                        assertEquals(7, s.rowsParsed());
                        assertEquals(5, s.rowsMatched());
                    }
                }
                assertTrue(completeSeen, "an ImportStatus complete frame");
                assertEquals(job.segmentsPatched(), rewritten.size());
                for (Map.Entry<String, Long> e : rewritten.entrySet()) {
                    assertEquals(SegmentReader.readSealedHeader(data.resolve("segments").resolve(e.getKey())).checksum(),
                            (long) e.getValue(), e.getKey());
                }
            }
            assertEquals(5.0, h.registry.counter("jetstream_import_rows_mutated_total").count());
            assertEquals(1.0, h.registry.counter("jetstream_import_rows_rejected_total", "reason", "bad_uri").count());
            assertEquals(1.0, h.registry.counter("jetstream_import_jobs_total", "result", "complete").count());

            // wire encoders: the display time is the imported one, seq and witnessed_at are untouched
            FeedFrame.Event upd = ImportHarness.sealedRows(data).stream()
                    .filter(e -> e.kind() == ArchiveRow.KIND_UPDATE && expected(e) == T_ALL).findFirst().orElseThrow();
            WireEvent w = new WireEvent().set(upd.seq(), WireEvent.displayTime(upd.witnessedAt(), upd.indexedAt()),
                    upd.kind(), did(0), POST, new String(upd.rkey(), StandardCharsets.UTF_8), "3lrev1", upd.payload(), 0,
                    upd.payload().length);
            JsonBuffer v1 = new JsonBuffer();
            new V1Json().write(w, v1);
            assertTrue(v1.toString().contains("\"time_us\":" + T_ALL), v1.toString());
            assertTrue(v1.toString().contains("\"cursor\":" + upd.seq()), v1.toString());
            JsonBuffer v2 = new JsonBuffer();
            new V2Json().writeMessage(w, v2);
            assertTrue(v2.toString().contains("\"time\":\"2020-05-06T07:08:09.123456Z\""), v2.toString());
            assertTrue(v2.toString().contains("\"seq\":" + upd.seq()), v2.toString());
            assertTrue(upd.witnessedAt() > T_ALL, "witnessed_at keeps the ingest time");

            // rows appended after the rules were installed carry the imported time from the start
            byte[] v2bytes = record("1/1 v2");
            h.append(List.of(row(ArchiveRow.KIND_UPDATE, did(0), "3k0aaaaaaaa", "3lrev9", record("0/0 v3")),
                    row(ArchiveRow.KIND_CREATE_RESYNC, did(1), "3k1aaaaaaaa", "3lrev9", v2bytes),
                    row(ArchiveRow.KIND_UPDATE, did(1), "3k1aaaaaaaa", "3lrev9", record("1/1 v3")),
                    row(ArchiveRow.KIND_UPDATE, did(5), "3k1aaaaaaaa", "3lrev9", record("5/1 v3"))));
            h.core.writer().forceRotate();
            List<FeedFrame.Event> all = ImportHarness.sealedRows(data);
            List<Long> tail = all.subList(all.size() - 4, all.size()).stream().map(FeedFrame.Event::indexedAt).toList();
            assertEquals(List.of(T_ALL, T_SPECIFIC, 0L, 0L), tail);

            // the same CSV again: nothing to change, no file touched
            Map<Path, byte[]> files = new HashMap<>();
            for (SegmentName.Entry e : SegmentName.scan(data.resolve("segments"))) {
                files.put(e.path(), Files.readAllBytes(e.path()));
            }
            ImportJob again = h.await(h.importer.submit(data.resolve("imports/ts.csv").toString()));
            assertEquals(ImportJob.COMPLETE, again.state(), again.error());
            assertEquals(0, again.rowsMutated());
            assertEquals(0, again.segmentsPatched());
            assertEquals(5, again.rowsMatchedAllVersions(), "the v3 update sealed since matches too");
            for (Map.Entry<Path, byte[]> e : files.entrySet()) {
                assertArrayEquals(e.getValue(), Files.readAllBytes(e.getKey()), e.getKey().toString());
            }
            assertTrue(h.fatals.isEmpty(), h.fatals.toString());
        }
    }

    @Test
    void aFailedJobStaysFailedAcrossARestart() throws Exception {
        String id;
        try (ImportHarness h = new ImportHarness(data, 4, 600)) {
            fill(h);
            Files.writeString(data.resolve("imports/bad.csv"), "uri,timestamp\n" + uri(0, 0)
                    + ",2020-01-01T00:00:00Z\n\"" + uri(1, 1) + ",2020-01-01T00:00:00Z\n");
            id = h.importer.submit("bad.csv");
            ImportJob j = h.await(id);
            assertEquals(ImportJob.FAILED, j.state());
            assertTrue(j.error().contains("unclosed quote"), j.error());
            assertEquals(1.0, h.registry.counter("jetstream_import_jobs_total", "result", "failed").count());
        }
        try (ImportHarness h = new ImportHarness(data, 4, 600)) {
            assertFalse(h.importer.busy(), "a failed job does not resume");
            ImportJob j = h.importer.status(null);
            assertEquals(id, j.id());
            assertEquals(ImportJob.FAILED, j.state());
            String json = new String(j.statusJson(), StandardCharsets.UTF_8);
            assertTrue(json.startsWith("{\"bucketed\":false,\"error\":\"") && json.contains("\"finishedAt\":\"")
                    && json.endsWith("\"state\":\"failed\",\"submittedAt\":\"" + json.substring(json.length() - 26)), json);
            ImportJob again = h.importer.status(id);
            assertEquals(ImportJob.FAILED, again.state());
        }
    }
}
