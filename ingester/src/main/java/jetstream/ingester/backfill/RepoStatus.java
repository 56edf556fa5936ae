package jetstream.ingester.backfill;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.Instant;

/**
 * The {@code repo/<did>} row (docs/metadata-keys.md): per-DID backfill state and steady-state
 * bookkeeping, stored as the reference's JSON ({@code RepoStatus} with its nested
 * {@code backfill} object, Go field order, {@code omitempty} strings and numbers, {@code omitzero}
 * times). Mutable: callers read a row, change it and write it back (usually staged into the
 * writer's durability batch). Not thread-safe.
 */
public final class RepoStatus {
    public static final String KEY_PREFIX = "repo/";
    private static final JsonFactory JSON = new JsonFactory();

    /** {@code backfill.status}. */
    public enum Status {
        NOT_STARTED("not_started"),
        /** Awaiting whole-repo replacement by the one-shot pending retry pass (interrupted bootstrap). */
        PENDING("pending"),
        COMPLETE("complete"),
        /** Retried by the steady-state failed-repo loop with durable backoff. */
        FAILED("failed"),
        /** The account exists but its repo cannot be fetched (deactivated, taken down, not found): terminal. */
        UNAVAILABLE("unavailable");

        private final String wire;

        Status(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        /** Complete, failed and unavailable end a repo's bootstrap; not_started and pending do not. */
        public boolean terminal() {
            return this == COMPLETE || this == FAILED || this == UNAVAILABLE;
        }

        public static Status of(String wire) {
            for (Status s : values()) {
                if (s.wire.equals(wire)) {
                    return s;
                }
            }
            throw new IllegalArgumentException("unknown repo backfill status \"" + wire + "\"");
        }
    }

    private final String did;
    private Status status = Status.NOT_STARTED;
    private String backfillRev = "";
    private int attempts;
    private int retryCount;
    private String lastError = "";
    private Instant nextAttemptAt;
    private Instant startedAt;
    private Instant completedAt;
    private String pds = "";
    private String host = "";
    private String handle = "";
    private String rev = "";
    private Instant updatedAt;
    private Instant lastAttemptedAt;
    private long recordCount;
    private long totalBytes;
    private boolean active;

    public RepoStatus(String did) {
        this.did = did;
    }

    /** A newly discovered repo: {@code not_started}, attributed to its roster PDS. */
    public static RepoStatus discovered(String did, String pds, Instant now) {
        RepoStatus r = new RepoStatus(did);
        r.pds = pds;
        r.active = true;
        r.updatedAt = now;
        return r;
    }

    public static String key(String did) {
        return KEY_PREFIX + did;
    }

    public String key() {
        return key(did);
    }

    /**
     * Decodes a stored row. Unknown keys are skipped (rows written by a newer build or the Go
     * reference stay readable).
     *
     * @throws IllegalStateException when the bytes are not a {@code RepoStatus}: the store is ours,
     *     so that is corruption and must stop the caller loudly
     */
    public static RepoStatus parse(String did, byte[] json) {
        RepoStatus r = new RepoStatus(did);
        boolean sawBackfill = false;
        try (JsonParser p = JSON.createParser(json)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, did);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "backfill" -> {
                        expect(t, JsonToken.START_OBJECT, did);
                        r.parseBackfill(p);
                        sawBackfill = true;
                    }
                    case "pds" -> r.pds = text(p, did);
                    case "host" -> r.host = text(p, did);
                    case "handle" -> r.handle = text(p, did);
                    case "rev" -> r.rev = text(p, did);
                    case "updated_at" -> r.updatedAt = time(p, did);
                    case "last_attempted_at" -> r.lastAttemptedAt = time(p, did);
                    case "record_count" -> r.recordCount = number(p, did);
                    case "total_bytes" -> r.totalBytes = number(p, did);
                    case "active" -> {
                        if (t != JsonToken.VALUE_TRUE && t != JsonToken.VALUE_FALSE) {
                            throw corrupt(did, "active is not a boolean");
                        }
                        r.active = t == JsonToken.VALUE_TRUE;
                    }
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw corrupt(did, "trailing data");
            }
            if (!sawBackfill) {
                throw corrupt(did, "the backfill object is missing");
            }
        } catch (IOException | IllegalArgumentException e) {
            throw corrupt(did, e.getMessage());
        }
        return r;
    }

    private void parseBackfill(JsonParser p) throws IOException {
        boolean sawStatus = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "status" -> {
                    status = Status.of(text(p, did));
                    sawStatus = true;
                }
                case "rev" -> backfillRev = text(p, did);
                case "attempts" -> attempts = (int) number(p, did);
                case "retry_count" -> retryCount = (int) number(p, did);
                case "last_error" -> lastError = text(p, did);
                case "next_attempt_at" -> nextAttemptAt = time(p, did);
                case "started_at" -> startedAt = time(p, did);
                case "completed_at" -> completedAt = time(p, did);
                default -> p.skipChildren();
            }
        }
        if (!sawStatus) {
            throw corrupt(did, "backfill.status is missing");
        }
    }

    private static void expect(JsonToken got, JsonToken want, String did) {
        if (got != want) {
            throw corrupt(did, "expected " + want + ", got " + got);
        }
    }

    private static String text(JsonParser p, String did) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw corrupt(did, p.currentName() + " is not a string");
        }
        return p.getText();
    }

    private static long number(JsonParser p, String did) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw corrupt(did, p.currentName() + " is not an integer");
        }
        return p.getLongValue();
    }

    private static Instant time(JsonParser p, String did) throws IOException {
        return GoTime.parse(text(p, did));
    }

    private static IllegalStateException corrupt(String did, String why) {
        return new IllegalStateException("metadata row " + KEY_PREFIX + did + " is not a RepoStatus: " + why);
    }

    /** The reference's JSON: Go field order, empty strings, zero numbers and zero times omitted. */
    public byte[] toJson() {
        return GoJson.object(192, j -> {
            j.object("backfill", b -> {
                b.requiredString("status", status.wire());
                b.string("rev", backfillRev);
                b.number("attempts", attempts);
                b.number("retry_count", retryCount);
                b.string("last_error", lastError);
                b.time("next_attempt_at", nextAttemptAt);
                b.time("started_at", startedAt);
                b.time("completed_at", completedAt);
            });
            j.string("pds", pds);
            j.string("host", host);
            j.string("handle", handle);
            j.string("rev", rev);
            j.time("updated_at", updatedAt);
            j.time("last_attempted_at", lastAttemptedAt);
            j.number("record_count", recordCount);
            j.number("total_bytes", totalBytes);
            j.bool("active", active);
        });
    }

    /**
     * The rev below which the merge filter drops live rows of this DID (docs/lifecycle.md: Merge): the backfill
     * rev of a {@code complete} repo, or null when the filter does not apply (not complete, or no rev).
     */
    public String mergeFilterRev() {
        return status == Status.COMPLETE && !backfillRev.isEmpty() ? backfillRev : null;
    }

    // ------------------------------------------------------------------ accessors

    public String did() {
        return did;
    }

    public Status status() {
        return status;
    }

    public RepoStatus status(Status s) {
        this.status = s;
        return this;
    }

    /** {@code backfill.rev}: the repo head rev at the end of its download. */
    public String backfillRev() {
        return backfillRev;
    }

    public RepoStatus backfillRev(String v) {
        this.backfillRev = nonNull(v);
        return this;
    }

    public int attempts() {
        return attempts;
    }

    public RepoStatus attempts(int v) {
        this.attempts = v;
        return this;
    }

    public int retryCount() {
        return retryCount;
    }

    public RepoStatus retryCount(int v) {
        this.retryCount = v;
        return this;
    }

    public String lastError() {
        return lastError;
    }

    public RepoStatus lastError(String v) {
        this.lastError = nonNull(v);
        return this;
    }

    /** {@code backfill.next_attempt_at}, or null. */
    public Instant nextAttemptAt() {
        return nextAttemptAt;
    }

    public RepoStatus nextAttemptAt(Instant v) {
        this.nextAttemptAt = v;
        return this;
    }

    public Instant startedAt() {
        return startedAt;
    }

    public RepoStatus startedAt(Instant v) {
        this.startedAt = v;
        return this;
    }

    public Instant completedAt() {
        return completedAt;
    }

    public RepoStatus completedAt(Instant v) {
        this.completedAt = v;
        return this;
    }

    /** The roster PDS hostname the repo was discovered on (routes retries). */
    public String pds() {
        return pds;
    }

    public RepoStatus pds(String v) {
        this.pds = nonNull(v);
        return this;
    }

    public String host() {
        return host;
    }

    public RepoStatus host(String v) {
        this.host = nonNull(v);
        return this;
    }

    public String handle() {
        return handle;
    }

    public RepoStatus handle(String v) {
        this.handle = nonNull(v);
        return this;
    }

    /** Top-level {@code rev}: the latest rev known for the DID (merge updates it). */
    public String rev() {
        return rev;
    }

    public RepoStatus rev(String v) {
        this.rev = nonNull(v);
        return this;
    }

    public Instant updatedAt() {
        return updatedAt;
    }

    public RepoStatus updatedAt(Instant v) {
        this.updatedAt = v;
        return this;
    }

    public Instant lastAttemptedAt() {
        return lastAttemptedAt;
    }

    public RepoStatus lastAttemptedAt(Instant v) {
        this.lastAttemptedAt = v;
        return this;
    }

    public long recordCount() {
        return recordCount;
    }

    public RepoStatus recordCount(long v) {
        this.recordCount = v;
        return this;
    }

    public long totalBytes() {
        return totalBytes;
    }

    public RepoStatus totalBytes(long v) {
        this.totalBytes = v;
        return this;
    }

    public boolean active() {
        return active;
    }

    public RepoStatus active(boolean v) {
        this.active = v;
        return this;
    }

    private static String nonNull(String v) {
        return v == null ? "" : v;
    }

    @Override
    public String toString() {
        return key() + " " + new String(toJson(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
