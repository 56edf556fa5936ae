package jetstream.atproto.cbor;

import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;

/**
 * The atproto data-model gate on a record block (docs/lifecycle.md: Live path, {@code invalid_data_model}): exactly
 * one DAG-CBOR item, a map at the top, every CID link with a SHA-256 multihash. {@link CborReader}
 * already refuses floats, other tags, non-canonical encodings and bad UTF-8; this adds the top-level
 * type, trailing bytes and the hash of each link. Allocates nothing.
 */
public final class DataModel {
    private DataModel() {}

    /** Whether {@code data[off, off+len)} is a valid record. */
    public static boolean isRecord(byte[] data, int off, int len) {
        try {
            CborReader r = new CborReader(data, off, len);
            if (r.peekKind() != CborReader.KIND_MAP) {
                return false;
            }
            item(r, 0);
            r.requireEnd();
            return true;
        } catch (DecodeException e) {
            return false;
        }
    }

    private static void item(CborReader r, int depth) {
        switch (r.peekKind()) {
            case CborReader.KIND_MAP -> {
                int n = r.readMapHeader();
                r.checkDepth(depth + 1);
                int prevOff = 0;
                int prevLen = -1;
                for (int i = 0; i < n; i++) {
                    prevLen = r.readKey(prevOff, prevLen);
                    prevOff = r.lastOffset();
                    item(r, depth + 1);
                }
            }
            case CborReader.KIND_ARRAY -> {
                int n = r.readArrayHeader();
                r.checkDepth(depth + 1);
                for (int i = 0; i < n; i++) {
                    item(r, depth + 1);
                }
            }
            case CborReader.KIND_LINK -> {
                int len = r.readLink();
                if (!sha256(r.buffer(), r.lastOffset(), len)) {
                    throw new DecodeException("cid_hash", "a CID link whose multihash is not SHA-256");
                }
            }
            default -> r.skip();
        }
    }

    /** Whether the binary CID at {@code b[off, off+len)} (already checked well-formed) hashes with SHA-256. */
    private static boolean sha256(byte[] b, int off, int len) {
        if (b[off] == Cid.HASH_SHA2_256) {
            return true; // CIDv0: a bare sha2-256 multihash
        }
        int p = off + 1; // CIDv1: version 1, codec varint, multihash code varint
        while (p < off + len && (b[p] & 0x80) != 0) {
            p++;
        }
        p++;
        return p < off + len && b[p] == Cid.HASH_SHA2_256;
    }
}
