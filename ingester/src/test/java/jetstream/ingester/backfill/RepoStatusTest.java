package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class RepoStatusTest {
    private static final String DID = "did:plc:53iucmf5ldftgqyf2ac7hmhd";

    /** Shaped like a row the Go reference writes: Go field order, omitempty/omitzero, RFC 3339 nanos. */
    private static final String REFERENCE = "{\"backfill\":{\"status\":\"complete\",\"rev\":\"3lbzx5mfz2k2c\","
            + "\"attempts\":1,\"started_at\":\"2025-11-03T09:15:02.123456789Z\","
            + "\"completed_at\":\"2025-11-03T09:15:03.5Z\"},\"pds\":\"morel.us-east.host.bsky.network\","
            + "\"rev\":\"3lbzx5mfz2k2c\",\"updated_at\":\"2025-11-03T09:15:03.5Z\",\"record_count\":1234,"
            + "\"total_bytes\":567890,\"active\":true}";

    @Test
    void referenceShapedRowRoundTripsByteForByte() {
        RepoStatus r = RepoStatus.parse(DID, REFERENCE.getBytes(StandardCharsets.UTF_8));
        assertEquals(RepoStatus.Status.COMPLETE, r.status());
        assertEquals("3lbzx5mfz2k2c", r.backfillRev());
        assertEquals(1, r.attempts());
        assertEquals(Instant.parse("2025-11-03T09:15:02.123456789Z"), r.startedAt());
        assertEquals(Instant.parse("2025-11-03T09:15:03.500Z"), r.completedAt());
        assertEquals("morel.us-east.host.bsky.network", r.pds());
        assertEquals(1234, r.recordCount());
        assertEquals(567890, r.totalBytes());
        assertTrue(r.active());
        assertNull(r.nextAttemptAt());
        assertEquals("3lbzx5mfz2k2c", r.mergeFilterRev());
        assertEquals(REFERENCE, new String(r.toJson(), StandardCharsets.UTF_8));
    }

    @Test
    void emptyFieldsAreOmittedExceptStatusAndActive() {
        RepoStatus r = new RepoStatus(DID);
        assertEquals("{\"backfill\":{\"status\":\"not_started\"},\"active\":false}",
                new String(r.toJson(), StandardCharsets.UTF_8));
        assertNull(r.mergeFilterRev());
    }

    @Test
    void everyFieldRoundTrips() {
        Instant t = Instant.parse("2026-12-02T17:00:00.000001Z");
        RepoStatus r = new RepoStatus(DID).status(RepoStatus.Status.FAILED).backfillRev("3abc").attempts(3)
                .retryCount(2).lastError("http 503 \"x\"").nextAttemptAt(t.plusSeconds(4 * 3600)).startedAt(t)
                .completedAt(t.plusSeconds(1)).pds("pds-0.sim.test").host("h").handle("alice.test").rev("3abd")
                .updatedAt(t).lastAttemptedAt(t).recordCount(7).totalBytes(99).active(true);
        RepoStatus back = RepoStatus.parse(DID, r.toJson());
        assertEquals(new String(r.toJson(), StandardCharsets.UTF_8), new String(back.toJson(), StandardCharsets.UTF_8));
        assertEquals(RepoStatus.Status.FAILED, back.status());
        assertEquals("http 503 \"x\"", back.lastError());
        assertEquals(t.plusSeconds(4 * 3600), back.nextAttemptAt());
        assertEquals(2, back.retryCount());
        assertEquals("alice.test", back.handle());
        assertNull(back.mergeFilterRev(), "the filter applies to complete repos only");
        assertTrue(new String(r.toJson(), StandardCharsets.UTF_8).contains("\"updated_at\":\"2026-12-02T17:00:00.000001Z\""));
    }

    @Test
    void unknownKeysAreSkippedAndOffsetsNormalised() {
        String json = "{\"future\":{\"a\":[1,2]},\"backfill\":{\"status\":\"unavailable\",\"x\":1},"
                + "\"updated_at\":\"2026-01-01T01:00:00+01:00\",\"active\":false}";
        RepoStatus r = RepoStatus.parse(DID, json.getBytes(StandardCharsets.UTF_8));
        assertEquals(RepoStatus.Status.UNAVAILABLE, r.status());
        assertEquals(Instant.parse("2026-01-01T00:00:00Z"), r.updatedAt());
        assertFalse(r.active());
    }

    @Test
    void corruptRowsFailLoudly() {
        for (String bad : new String[] {"", "[]", "{\"active\":true}", "{\"backfill\":{\"status\":\"done\"}}",
                "{\"backfill\":{\"status\":\"failed\",\"attempts\":\"1\"}}", "{\"backfill\":{\"status\":\"failed\"}} x",
                "{\"backfill\":{\"status\":\"failed\"},\"updated_at\":\"yesterday\"}"}) {
            assertThrows(IllegalStateException.class, () -> RepoStatus.parse(DID, bad.getBytes(StandardCharsets.UTF_8)),
                    bad);
        }
    }

    @Test
    void terminalStatuses() {
        assertTrue(RepoStatus.Status.COMPLETE.terminal());
        assertTrue(RepoStatus.Status.FAILED.terminal());
        assertTrue(RepoStatus.Status.UNAVAILABLE.terminal());
        assertFalse(RepoStatus.Status.PENDING.terminal());
        assertFalse(RepoStatus.Status.NOT_STARTED.terminal());
    }
}
