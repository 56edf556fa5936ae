package jetstream.ingester.backfill;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.Instant;

/**
 * The {@code pdshost/<hostname>} row (docs/metadata-keys.md): one roster host, its relay-reported
 * status and account count, the host-local {@code listRepos} cursor (where a crawl resumes), the
 * request cursor of the last non-empty page (where the discovery sweep reopens), and its lifecycle
 * state. Go field order and omit rules. Not thread-safe.
 */
public final class PdsHost {
    public static final String KEY_PREFIX = "pdshost/";

    /** {@code state} values (the reference's host states, spelled lowercase; facts Q6). */
    public static final String PENDING = "pending";
    public static final String RUNNING = "running";
    public static final String BACKOFF = "backoff";
    /** Enumerated to the end and every covered repo terminal, cursor durable. */
    public static final String DRAINED = "drained";
    /** Failed its second attempt: visible, does not block bootstrap. */
    public static final String EXHAUSTED = "exhausted";

    private final String hostname;
    private String relayStatus = "";
    private long relayAccounts;
    private long seq;
    private String listReposCursor = "";
    private String lastNonEmptyCursor = "";
    private boolean enumerated;
    private long actualAccounts;
    private int attempts;
    private String lastError = "";
    private Instant nextAttemptAt;
    private String state = "";
    private Instant firstSeenAt;
    private Instant updatedAt;

    public PdsHost(String hostname) {
        this.hostname = hostname;
    }

    public static String key(String hostname) {
        return KEY_PREFIX + hostname;
    }

    public String key() {
        return key(hostname);
    }

    /** @throws IllegalStateException when the bytes are not a {@code PDSHost} (our own store: corruption) */
    public static PdsHost parse(String hostname, byte[] json) {
        PdsHost h = new PdsHost(hostname);
        try (JsonParser p = SyncCalls.JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw corrupt(hostname, "not an object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "relay_status" -> h.relayStatus = p.getValueAsString("");
                    case "relay_accounts" -> h.relayAccounts = p.getLongValue();
                    case "seq" -> h.seq = p.getLongValue();
                    case "list_repos_cursor" -> h.listReposCursor = p.getValueAsString("");
                    case "last_non_empty_cursor" -> h.lastNonEmptyCursor = p.getValueAsString("");
                    case "enumerated" -> h.enumerated = t == JsonToken.VALUE_TRUE;
                    case "actual_accounts" -> h.actualAccounts = p.getLongValue();
                    case "attempts" -> h.attempts = p.getIntValue();
                    case "last_error" -> h.lastError = p.getValueAsString("");
                    case "next_attempt_at" -> h.nextAttemptAt = GoTime.parse(p.getText());
                    case "state" -> h.state = p.getValueAsString("");
                    case "first_seen_at" -> h.firstSeenAt = GoTime.parse(p.getText());
                    case "updated_at" -> h.updatedAt = GoTime.parse(p.getText());
                    default -> p.skipChildren();
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            throw corrupt(hostname, e.getMessage());
        }
        return h;
    }

    private static IllegalStateException corrupt(String hostname, String why) {
        return new IllegalStateException("metadata row " + KEY_PREFIX + hostname + " is not a PDSHost: " + why);
    }

    public byte[] toJson() {
        return GoJson.object(160, j -> {
            j.requiredString("hostname", hostname);
            j.string("relay_status", relayStatus);
            j.number("relay_accounts", relayAccounts);
            j.number("seq", seq);
            j.string("list_repos_cursor", listReposCursor);
            j.string("last_non_empty_cursor", lastNonEmptyCursor);
            j.bool("enumerated", enumerated);
            j.number("actual_accounts", actualAccounts);
            j.number("attempts", attempts);
            j.string("last_error", lastError);
            j.time("next_attempt_at", nextAttemptAt);
            j.string("state", state);
            j.time("first_seen_at", firstSeenAt);
            j.time("updated_at", updatedAt);
        });
    }

    /** Drained or exhausted: the bootstrap does not wait for this host any more. */
    public boolean terminal() {
        return DRAINED.equals(state) || EXHAUSTED.equals(state);
    }

    public String hostname() {
        return hostname;
    }

    public String relayStatus() {
        return relayStatus;
    }

    public PdsHost relayStatus(String v) {
        relayStatus = v == null ? "" : v;
        return this;
    }

    public long relayAccounts() {
        return relayAccounts;
    }

    public PdsHost relayAccounts(long v) {
        relayAccounts = v;
        return this;
    }

    public long seq() {
        return seq;
    }

    public PdsHost seq(long v) {
        seq = v;
        return this;
    }

    public String listReposCursor() {
        return listReposCursor;
    }

    public PdsHost listReposCursor(String v) {
        listReposCursor = v == null ? "" : v;
        return this;
    }

    public String lastNonEmptyCursor() {
        return lastNonEmptyCursor;
    }

    public PdsHost lastNonEmptyCursor(String v) {
        lastNonEmptyCursor = v == null ? "" : v;
        return this;
    }

    public boolean enumerated() {
        return enumerated;
    }

    public PdsHost enumerated(boolean v) {
        enumerated = v;
        return this;
    }

    public long actualAccounts() {
        return actualAccounts;
    }

    public PdsHost actualAccounts(long v) {
        actualAccounts = v;
        return this;
    }

    public int attempts() {
        return attempts;
    }

    public PdsHost attempts(int v) {
        attempts = v;
        return this;
    }

    public String lastError() {
        return lastError;
    }

    public PdsHost lastError(String v) {
        lastError = v == null ? "" : v;
        return this;
    }

    public Instant nextAttemptAt() {
        return nextAttemptAt;
    }

    public PdsHost nextAttemptAt(Instant v) {
        nextAttemptAt = v;
        return this;
    }

    public String state() {
        return state;
    }

    public PdsHost state(String v) {
        state = v == null ? "" : v;
        return this;
    }

    public Instant firstSeenAt() {
        return firstSeenAt;
    }

    public PdsHost firstSeenAt(Instant v) {
        firstSeenAt = v;
        return this;
    }

    public Instant updatedAt() {
        return updatedAt;
    }

    public PdsHost updatedAt(Instant v) {
        updatedAt = v;
        return this;
    }

    public PdsHost copy() {
        return parse(hostname, toJson());
    }
}
