package jetstream.client;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.json.CborJson;
import jetstream.atproto.json.JsonBuffer;
import jetstream.atproto.json.JsonToCbor;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;

/**
 * One delivered event, from the archive (a row of a downloaded block) or from the live tail (a v2
 * {@code subscribeEvents} message). Immutable. Archive events keep their stored CBOR payload as a
 * slice of the block body they came from (never copied); live events keep their payload JSON.
 * Every event renders to the same v2 payload JSON with {@link #toJson()}.
 */
public final class Event {
    /** The four event kinds of the v2 wire. */
    public enum Kind {
        COMMIT, IDENTITY, ACCOUNT, SYNC;

        /** Lowercase wire name. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** What an identity event says: the DID and its handle (null when the event carries none). */
    public record Identity(String did, String handle) {}

    /**
     * What an account event says: whether the account is active and, when it is not, the status the
     * host gave ({@code takendown}, {@code suspended}, {@code deleted}, {@code deactivated}, ...; may be null).
     */
    public record Account(String did, boolean active, String status) {}

    private static final ThreadLocal<V2Json> V2 = ThreadLocal.withInitial(V2Json::new);
    private static final ThreadLocal<CborJson> RECORD = ThreadLocal.withInitial(CborJson::new);

    private final long seq;
    private final long timeMicros;
    private final int storedKind;
    /**
     * Archive events decode did, rkey and rev from their block body on first use (most consumers
     * read few of them, and a String per field per event was most of the decode's allocation);
     * racy caching is safe: every thread computes the same immutable String.
     */
    private String did;
    private final String collection;
    private String rkey;
    private String rev;
    /** Archive: offsets of did, rkey and rev in {@link #cbor} (the block body). */
    private final int didOff;
    private final int didLen;
    private final int rkeyOff;
    private final int rkeyLen;
    private final int revOff;
    private final int revLen;
    /** Archive: the stored CBOR payload slice. Null for live events. */
    private final byte[] cbor;
    private final int cborOff;
    private final int cborLen;
    /** Live: the payload object's JSON text, and the record's offsets inside it (-1 when absent). */
    private final byte[] json;
    private final int recordOff;
    private final int recordLen;
    private volatile String cid;
    private volatile String recordJson;

    private Event(long seq, long timeMicros, int storedKind, String did, String collection, String rkey, String rev,
                  byte[] cbor, int cborOff, int cborLen, byte[] json, int recordOff, int recordLen, String cid,
                  int[] fields) {
        this.seq = seq;
        this.timeMicros = timeMicros;
        this.storedKind = storedKind;
        this.did = did;
        this.collection = collection;
        this.rkey = rkey;
        this.rev = rev;
        this.didOff = fields == null ? 0 : fields[0];
        this.didLen = fields == null ? 0 : fields[1];
        this.rkeyOff = fields == null ? 0 : fields[2];
        this.rkeyLen = fields == null ? 0 : fields[3];
        this.revOff = fields == null ? 0 : fields[4];
        this.revLen = fields == null ? 0 : fields[5];
        this.cbor = cbor;
        this.cborOff = cborOff;
        this.cborLen = cborLen;
        this.json = json;
        this.recordOff = recordOff;
        this.recordLen = recordLen;
        this.cid = cid;
    }

    /**
     * An archive row of a block body that must never change afterwards: the payload is
     * {@code body[off, off+len)}, did, rkey and rev are {@code body[fields[2j], fields[2j]+fields[2j+1])}
     * (j = 0, 1, 2; {@code fields} is read here, not kept). {@code did} may be given when already decoded.
     */
    static Event archived(long seq, long timeMicros, int storedKind, String did, String collection, byte[] body,
                          int[] fields, int off, int len) {
        return new Event(seq, timeMicros, storedKind, did, collection, null, null, body, off, len, null, -1, 0, null,
                fields);
    }

    static Event live(long seq, long timeMicros, int storedKind, String did, String collection, String rkey, String rev,
                      byte[] payloadJson, int recordOff, int recordLen, String cid) {
        return new Event(seq, timeMicros, storedKind, did, collection, rkey, rev, null, 0, 0, payloadJson, recordOff,
                recordLen, cid, null);
    }

    /** Jetstream seq: the cursor of this event. */
    public long seq() {
        return seq;
    }

    /** Display time in µs since the epoch. */
    public long timeMicros() {
        return timeMicros;
    }

    public Instant time() {
        return Instant.ofEpochSecond(Math.floorDiv(timeMicros, 1_000_000L), Math.floorMod(timeMicros, 1_000_000L) * 1000L);
    }

    public Kind kind() {
        return switch (storedKind) {
            case 4 -> Kind.IDENTITY;
            case 5 -> Kind.ACCOUNT;
            case 6 -> Kind.SYNC;
            default -> Kind.COMMIT;
        };
    }

    /**
     * The stored kind byte (docs/segment-format.md): 1 create, 2 update, 3 delete, 4 identity, 5 account, 6 sync,
     * 7 resync-create. Live events report 1 for every create (the wire shows kind 7 as create).
     */
    public int storedKind() {
        return storedKind;
    }

    public boolean fromArchive() {
        return cbor != null;
    }

    public String did() {
        String d = did;
        if (d == null) {
            d = new String(cbor, didOff, didLen, StandardCharsets.UTF_8);
            did = d;
        }
        return d;
    }

    /** Commit events: the collection NSID; empty for other kinds. */
    public String collection() {
        return collection;
    }

    public String rkey() {
        String r = rkey;
        if (r == null) {
            r = new String(cbor, rkeyOff, rkeyLen, StandardCharsets.UTF_8);
            rkey = r;
        }
        return r;
    }

    public String rev() {
        String r = rev;
        if (r == null) {
            r = new String(cbor, revOff, revLen, StandardCharsets.UTF_8);
            rev = r;
        }
        return r;
    }

    /** {@code create}, {@code update} or {@code delete}; null for non-commit events. */
    public String operation() {
        return switch (storedKind) {
            case 1, 7 -> "create";
            case 2 -> "update";
            case 3 -> "delete";
            default -> null;
        };
    }

    /** Whether this commit event carries a record (create, update, resync-create). */
    public boolean hasRecord() {
        return storedKind == 1 || storedKind == 2 || storedKind == 7;
    }

    /** The record's CID string, computed on first use for archive events; null without a record. */
    public String cid() {
        if (!hasRecord()) {
            return null;
        }
        String c = cid;
        if (c == null && cbor != null) {
            c = Cid.dagCborString(cbor, cborOff, cborLen);
            cid = c;
        }
        return c;
    }

    /**
     * The record as DAG-CBOR (a copy). Archive events give the stored bytes; live events convert the
     * wire's record JSON back. Null without a record.
     */
    public byte[] recordCbor() {
        if (!hasRecord()) {
            return null;
        }
        if (cbor != null) {
            return Arrays.copyOfRange(cbor, cborOff, cborOff + cborLen);
        }
        return JsonToCbor.toCbor(Arrays.copyOfRange(json, recordOff, recordOff + recordLen));
    }

    /**
     * The record as JSON (the wire rendering); null without a record.
     *
     * @throws jetstream.atproto.DecodeException when a stored record is not valid DAG-CBOR
     */
    public String recordJson() {
        if (!hasRecord()) {
            return null;
        }
        String r = recordJson;
        if (r == null) {
            if (cbor != null) {
                JsonBuffer b = new JsonBuffer(cborLen * 2 + 16);
                RECORD.get().writeRecord(cbor, cborOff, cborLen, b);
                r = b.toString();
            } else {
                r = new String(json, recordOff, recordLen, StandardCharsets.UTF_8);
            }
            recordJson = r;
        }
        return r;
    }

    /**
     * The stored payload bytes of an archive event without copying: record CBOR for commits, the
     * upstream CBOR body for identity/account/sync. Null for live events.
     */
    public byte[] payloadArray() {
        return cbor;
    }

    public int payloadOffset() {
        return cborOff;
    }

    public int payloadLength() {
        return cborLen;
    }

    /**
     * Precomputes what the options ask the decode workers to (JSON, CID) off the consumer thread. A
     * record that does not render stays unrendered: the event is still delivered, and
     * {@link #recordJson()} throws the {@link jetstream.atproto.DecodeException} when asked.
     */
    void warm(boolean rawRecords, boolean cids) {
        if (!rawRecords) {
            try {
                recordJson();
            } catch (DecodeException e) {
                // Left for the accessor to report.
            }
        }
        if (!rawRecords || cids) {
            cid();
        }
    }

    /** Identity events: the DID and handle they carry; null for every other kind. */
    public Identity identity() {
        if (storedKind != 4) {
            return null;
        }
        String[] f = inner("identity", "handle", null);
        return new Identity(did(), f[0]);
    }

    /** Account events: active flag and status; null for every other kind. */
    public Account account() {
        if (storedKind != 5) {
            return null;
        }
        String[] f = inner("account", "status", "active");
        return new Account(did(), "true".equals(f[1]), f[0]);
    }

    /** Two scalar fields of the payload's inner object, read from the v2 JSON both origins render to. */
    private String[] inner(String object, String a, String b) {
        String[] out = new String[2];
        try (JsonParser p = XrpcCalls.JSON.createParser(toJsonBytes())) {
            p.nextToken();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.currentName();
                JsonToken t = p.nextToken();
                if (!k.equals(object) || t != JsonToken.START_OBJECT) {
                    p.skipChildren();
                    continue;
                }
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String f = p.currentName();
                    JsonToken v = p.nextToken();
                    if (v.isScalarValue() && v != JsonToken.VALUE_NULL && (f.equals(a) || f.equals(b))) {
                        out[f.equals(a) ? 0 : 1] = p.getText();
                    } else {
                        p.skipChildren();
                    }
                }
            }
        } catch (IOException e) {
            throw new JetstreamException("event " + seq + " payload is not valid JSON: " + e.getMessage(), e);
        }
        return out;
    }

    /** Bytes the strings rendered by {@link #warm} hold (UTF-16 upper bound). */
    long renderedBytes() {
        String r = recordJson;
        String c = cid;
        return (r == null ? 0 : 2L * r.length()) + (c == null ? 0 : 2L * c.length());
    }

    /** The v2 {@code subscribeEvents} payload object of this event (docs/wire.md: v2 payloads). */
    public String toJson() {
        return new String(toJsonBytes(), StandardCharsets.UTF_8);
    }

    public byte[] toJsonBytes() {
        if (json != null) {
            return json.clone();
        }
        JsonBuffer b = new JsonBuffer(cborLen * 2 + 256);
        WireEvent w = new WireEvent().set(seq, timeMicros, storedKind, did(), collection, rkey(), rev(), cbor, cborOff, cborLen);
        V2.get().writePayload(w, b);
        return b.toByteArray();
    }

    /** Appends the payload JSON to {@code out} without an intermediate copy. */
    public void writeJson(JsonBuffer out, WireEvent scratch, V2Json v2) {
        if (json != null) {
            out.append(json, 0, json.length);
            return;
        }
        v2.writePayload(scratch.set(seq, timeMicros, storedKind, did(), collection, rkey(), rev(), cbor, cborOff, cborLen), out);
    }

    @Override
    public String toString() {
        return "Event{seq=" + seq + ", kind=" + kind().wireName() + ", did=" + did()
                + (kind() == Kind.COMMIT ? ", " + operation() + " " + collection + "/" + rkey() : "") + "}";
    }
}
