package jetstream.ingester.importer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.cid.Cid;
import jetstream.segment.Kind;

/**
 * The imported timestamps of one record URI: one for every version ({@code all_versions}) and
 * any number for single versions by record CID ({@code specific_version}). A row whose payload
 * recomputes to a pinned CID takes that timestamp; any other create/update/resync row of the URI
 * takes the all-versions one. Later CSV rows overwrite earlier ones of the same scope (and CID).
 */
public final class ImportRule {
    /** How a row matched: not at all, through all_versions, or through its CID. */
    public enum Match { NONE, ALL_VERSIONS, SPECIFIC }

    private long allVersions;
    private final List<String> cids = new ArrayList<>(0);
    private final List<Long> cidTimes = new ArrayList<>(0);

    /** Folds one valid CSV row of this URI in (last write wins). */
    public void add(ImportCsv.Row row) {
        if (row.cid() == null) {
            allVersions = row.timestampMicros();
            return;
        }
        int i = cids.indexOf(row.cid());
        if (i >= 0) {
            cidTimes.set(i, row.timestampMicros());
        } else {
            cids.add(row.cid());
            cidTimes.add(row.timestampMicros());
        }
    }

    /** Whether this rule pins {@code cid}. */
    public boolean pins(String cid) {
        return cids.contains(cid);
    }

    /** The match of a row of kind {@code kind} whose payload is {@code payload[off, off+len)}. */
    public Match match(int kind, byte[] payload, int off, int len) {
        if (!Kind.isValid(kind) || !Kind.of(kind).isMaterialization()) {
            return Match.NONE;
        }
        if (!cids.isEmpty() && cids.contains(Cid.dagCborString(payload, off, len))) {
            return Match.SPECIFIC;
        }
        return allVersions != 0 ? Match.ALL_VERSIONS : Match.NONE;
    }

    /** The imported timestamp for a row that matched as {@code m} with payload {@code payload}. */
    public long timestamp(Match m, byte[] payload, int off, int len) {
        return switch (m) {
            case NONE -> 0;
            case ALL_VERSIONS -> allVersions;
            case SPECIFIC -> cidTimes.get(cids.indexOf(Cid.dagCborString(payload, off, len)));
        };
    }

    /** Key of a URI in the rule store: did, collection, rkey separated by NUL (none can hold one). */
    static byte[] key(String did, String collection, String rkey) {
        return (did + '\0' + collection + '\0' + rkey).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code 0x01}, all-versions i64 LE (0 = none), u32 LE count, per CID: u8 length, ASCII CID, i64 LE. */
    byte[] encode() {
        int n = 1 + 8 + 4;
        for (String c : cids) {
            n += 1 + c.length() + 8;
        }
        ByteBuffer b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) 1).putLong(allVersions).putInt(cids.size());
        for (int i = 0; i < cids.size(); i++) {
            byte[] c = cids.get(i).getBytes(StandardCharsets.US_ASCII);
            b.put((byte) c.length).put(c).putLong(cidTimes.get(i));
        }
        return b.array();
    }

    /** Parses {@link #encode()}'s form; anything else is our own corruption. */
    static ImportRule decode(byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        if (v.length < 13 || b.get() != 1) {
            throw new IllegalStateException("import rule value of " + v.length + " bytes has an unknown layout");
        }
        ImportRule r = new ImportRule();
        r.allVersions = b.getLong();
        int count = b.getInt();
        for (int i = 0; i < count; i++) {
            byte[] c = new byte[b.get() & 0xFF];
            b.get(c);
            r.cids.add(new String(c, StandardCharsets.US_ASCII));
            r.cidTimes.add(b.getLong());
        }
        return r;
    }
}
