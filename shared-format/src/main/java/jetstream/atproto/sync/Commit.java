package jetstream.atproto.sync;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cbor.CborWriter;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.atproto.crypto.PublicKey;

/**
 * A signed repository commit (repo format version 3): {@code {did, version, data, rev, prev, sig}}.
 * The signature covers the canonical DAG-CBOR of the commit object without {@code sig}; that
 * encoding is computed once at decode time (any further fields a writer added are covered too).
 *
 * @param did the repository's DID
 * @param data root CID of the repository MST
 * @param rev the commit's revision (a TID; its syntax is checked where events are converted)
 * @param prev the previous commit's CID, usually null in version 3
 * @param sig the 64-byte compact signature
 * @param unsigned canonical bytes the signature is over
 */
public record Commit(String did, long version, Cid data, String rev, Cid prev, byte[] sig, byte[] unsigned) {
    public static final int VERSION = 3;

    public static Commit decode(byte[] block) {
        return decode(block, 0, block.length);
    }

    /**
     * Decodes and validates the commit block in one pass, without building a generic value tree: the
     * strict reader only accepts canonical DAG-CBOR, so the unsigned bytes are the block's own bytes
     * with the {@code sig} entry cut out and the map header counting one entry fewer (exactly what
     * re-encoding the decoded map without {@code sig} gives).
     *
     * @throws DecodeException on malformed DAG-CBOR or a commit object that breaks the schema
     */
    public static Commit decode(byte[] buf, int off, int len) {
        CborReader r = new CborReader(buf, off, len);
        if (r.peekKind() != CborReader.KIND_MAP) {
            // not a commit at all: let the generic decoder name the first fault, as it always has
            DagCbor.decodeMap(buf, off, len);
            throw new DecodeException("cbor_type", "expected a map at top level");
        }
        int n = r.readMapHeader();
        r.checkDepth(1);
        int entriesStart = r.position();
        int[] valueAt = new int[FIELDS.length];
        Arrays.fill(valueAt, -1);
        int sigStart = -1;
        int sigEnd = -1;
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            int entryStart = r.position();
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            int field = field(buf, prevOff, prevLen);
            if (field >= 0) {
                valueAt[field] = r.position();
            }
            r.skip(1);
            if (field == SIG) {
                sigStart = entryStart;
                sigEnd = r.position();
            }
        }
        r.requireEnd();
        int end = off + len;
        CborReader v = new CborReader();
        String did = value(v, buf, valueAt[DID], end, CborReader.KIND_TEXT, "did") ? v.readString() : null;
        Long version = value(v, buf, valueAt[VERSION_FIELD], end, CborReader.KIND_INT, "version") ? (Long) v.readInt() : null;
        Cid data = value(v, buf, valueAt[DATA], end, CborReader.KIND_LINK, "data") ? v.readCid() : null;
        String rev = value(v, buf, valueAt[REV], end, CborReader.KIND_TEXT, "rev") ? v.readString() : null;
        byte[] sig = value(v, buf, valueAt[SIG], end, CborReader.KIND_BYTES, "sig") ? v.readByteArray() : null;
        Cid prev = null;
        boolean badPrev = false;
        if (valueAt[PREV] >= 0) {
            v.reset(buf, valueAt[PREV], end - valueAt[PREV]);
            int kind = v.peekKind();
            prev = kind == CborReader.KIND_LINK ? v.readCid() : null;
            badPrev = kind != CborReader.KIND_LINK && kind != CborReader.KIND_NULL;
        }
        if (did == null || version == null || data == null || rev == null || sig == null || badPrev) {
            throw new DecodeException("bad_commit", "commit lacks did, version, data, rev or sig, or has a non-link prev");
        }
        if (version != VERSION) {
            throw new DecodeException("bad_commit_version", "unsupported repo commit version " + version);
        }
        CborWriter w = new CborWriter(len);
        w.writeMapHeader(n - 1);
        w.writeRaw(buf, entriesStart, sigStart - entriesStart);
        w.writeRaw(buf, sigEnd, off + len - sigEnd);
        return new Commit(did, version, data, rev, prev, sig, w.toByteArray());
    }

    private static final byte[][] FIELDS = {ascii("did"), ascii("version"), ascii("data"), ascii("rev"), ascii("sig"),
            ascii("prev")};
    private static final int DID = 0;
    private static final int VERSION_FIELD = 1;
    private static final int DATA = 2;
    private static final int REV = 3;
    private static final int SIG = 4;
    private static final int PREV = 5;

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Index of the known field named by {@code buf[off, off+len)}, or -1. */
    private static int field(byte[] buf, int off, int len) {
        for (int f = 0; f < FIELDS.length; f++) {
            byte[] name = FIELDS[f];
            if (name.length == len && Arrays.equals(buf, off, off + len, name, 0, len)) {
                return f;
            }
        }
        return -1;
    }

    /**
     * Positions {@code v} on the value at {@code at} (-1: the field is absent) and tells whether it is
     * there; a present value of another kind breaks the schema.
     */
    private static boolean value(CborReader v, byte[] buf, int at, int end, int kind, String name) {
        if (at < 0) {
            return false;
        }
        v.reset(buf, at, end - at);
        if (v.peekKind() != kind) {
            throw new DecodeException("bad_commit", "commit field " + name + " has the wrong type");
        }
        return true;
    }

    /** A new version-3 commit signed by {@code key} ({@code prev} may be null, and is written as null). */
    public static Commit sign(String did, Cid data, String rev, Cid prev, PrivateKey key) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("did", did);
        m.put("version", (long) VERSION);
        m.put("data", data);
        m.put("rev", rev);
        m.put("prev", prev);
        byte[] unsigned = DagCbor.encode(m);
        return new Commit(did, VERSION, data, rev, prev, key.sign(unsigned), unsigned);
    }

    /** The commit block: the unsigned fields plus {@code sig}, canonical DAG-CBOR. */
    public byte[] encode() {
        Map<String, Object> m = DagCbor.decodeMap(unsigned, 0, unsigned.length);
        m.put("sig", sig);
        return DagCbor.encode(m);
    }

    /** Whether {@link #sig()} is a valid atproto signature by {@code key} over {@link #unsigned()}. */
    public boolean verifySignature(PublicKey key) {
        return key.verify(unsigned, sig);
    }
}
