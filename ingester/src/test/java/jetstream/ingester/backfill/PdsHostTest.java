package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The {@code pdshost/} row's bytes: Go field order, omitempty strings and numbers, omitzero times. */
@Tag("unit")
class PdsHostTest {
    private static final String HOST = "morel.us-east.host.bsky.network";

    @Test
    void everyFieldInGoOrderAndBack() {
        PdsHost h = new PdsHost(HOST).relayStatus("active").relayAccounts(120).seq(7).listReposCursor("c-2")
                .lastNonEmptyCursor("c-1").enumerated(true).actualAccounts(118).attempts(2).lastError("http 503")
                .nextAttemptAt(Instant.parse("2025-11-03T09:15:02.123456789Z")).state(PdsHost.BACKOFF)
                .firstSeenAt(Instant.parse("2025-11-03T09:00:00Z")).updatedAt(Instant.parse("2025-11-03T09:15:03.500Z"));
        String want = "{\"hostname\":\"" + HOST + "\",\"relay_status\":\"active\",\"relay_accounts\":120,\"seq\":7,"
                + "\"list_repos_cursor\":\"c-2\",\"last_non_empty_cursor\":\"c-1\",\"enumerated\":true,"
                + "\"actual_accounts\":118,\"attempts\":2,\"last_error\":\"http 503\","
                + "\"next_attempt_at\":\"2025-11-03T09:15:02.123456789Z\",\"state\":\"backoff\","
                + "\"first_seen_at\":\"2025-11-03T09:00:00Z\",\"updated_at\":\"2025-11-03T09:15:03.5Z\"}";
        assertEquals(want, new String(h.toJson(), StandardCharsets.UTF_8));
        assertEquals(want, new String(PdsHost.parse(HOST, h.toJson()).toJson(), StandardCharsets.UTF_8));
    }

    @Test
    void emptyFieldsAreOmittedExceptHostnameAndEnumerated() {
        assertEquals("{\"hostname\":\"" + HOST + "\",\"enumerated\":false}",
                new String(new PdsHost(HOST).toJson(), StandardCharsets.UTF_8));
    }

    @Test
    void aRowThatIsNotAnObjectIsCorruption() {
        assertThrows(IllegalStateException.class, () -> PdsHost.parse(HOST, "[1]".getBytes(StandardCharsets.UTF_8)));
    }
}
