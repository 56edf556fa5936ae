package jetstream.atproto.sync;

import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.DecodeException;
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

    /** @throws DecodeException on malformed DAG-CBOR or a commit object that breaks the schema */
    public static Commit decode(byte[] buf, int off, int len) {
        Map<String, Object> m = DagCbor.decodeMap(buf, off, len);
        String did = field(m, "did", String.class);
        Long version = field(m, "version", Long.class);
        Cid data = field(m, "data", Cid.class);
        String rev = field(m, "rev", String.class);
        byte[] sig = field(m, "sig", byte[].class);
        Object prev = m.get("prev");
        if (did == null || version == null || data == null || rev == null || sig == null
                || (prev != null && !(prev instanceof Cid))) {
            throw new DecodeException("bad_commit", "commit lacks did, version, data, rev or sig, or has a non-link prev");
        }
        if (version != VERSION) {
            throw new DecodeException("bad_commit_version", "unsupported repo commit version " + version);
        }
        Map<String, Object> unsignedMap = new LinkedHashMap<>(m);
        unsignedMap.remove("sig");
        return new Commit(did, version, data, rev, (Cid) prev, sig, DagCbor.encode(unsignedMap));
    }

    private static <T> T field(Map<String, Object> m, String name, Class<T> type) {
        Object v = m.get(name);
        if (v != null && !type.isInstance(v)) {
            throw new DecodeException("bad_commit", "commit field " + name + " has the wrong type");
        }
        return type.cast(v);
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
