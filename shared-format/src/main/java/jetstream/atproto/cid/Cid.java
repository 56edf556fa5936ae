package jetstream.atproto.cid;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import jetstream.atproto.DecodeException;
import jetstream.atproto.crypto.Sha256;

/**
 * A content identifier: CIDv1 ({@code version, codec, multihash}) or CIDv0 (a bare sha2-256
 * multihash, implicitly dag-pb). Immutable; equality is over the binary form.
 *
 * <p>atproto records are CIDv1 dag-cbor sha2-256 ({@code bafyrei...}); blobs are CIDv1 raw
 * ({@code bafkrei...}); old records may link CIDv0 ({@code Qm...}). Any codec and multihash
 * code parse; only sha2-256 can be computed or verified.
 */
public final class Cid {
    public static final int CODEC_RAW = 0x55;
    public static final int CODEC_DAG_PB = 0x70;
    public static final int CODEC_DAG_CBOR = 0x71;
    public static final int HASH_SHA2_256 = 0x12;
    /** Bound on a digest length; real multihashes are at most 64 bytes. */
    public static final int MAX_DIGEST_BYTES = 64;
    /** Binary length of a CIDv1 dag-cbor/raw sha2-256 CID ({@code 01 71 12 20} + 32 bytes). */
    public static final int SHA256_V1_BYTES = 36;

    private final byte[] bytes;
    private final int version;
    private final int codec;
    private final int mhCode;
    private final int digestOffset;
    /** Computed on first use (0 = not yet): most decoded links never enter a hash map. */
    private int hash;
    private String text;

    private Cid(byte[] bytes, int version, int codec, int mhCode, int digestOffset) {
        this.bytes = bytes;
        this.version = version;
        this.codec = codec;
        this.mhCode = mhCode;
        this.digestOffset = digestOffset;
    }

    /**
     * Length of the binary CID starting at {@code buf[off]} (reading no further than {@code limit}),
     * after checking its structure. Used where a CID is a prefix (CAR block frames).
     *
     * @throws DecodeException {@code bad_cid} if the bytes are not a well-formed CID
     */
    public static int binaryLength(byte[] buf, int off, int limit) {
        if (off + 2 <= limit && buf[off] == HASH_SHA2_256 && buf[off + 1] == 0x20) {
            if (off + 34 > limit) {
                throw new DecodeException("bad_cid", "truncated CIDv0");
            }
            return 34;
        }
        int p = off;
        long version = Varint.decode(buf, p, limit);
        p += Varint.size(version);
        if (version != 1) {
            throw new DecodeException("bad_cid", "unsupported CID version " + version);
        }
        long codec = Varint.decode(buf, p, limit);
        p += Varint.size(codec);
        long mh = Varint.decode(buf, p, limit);
        p += Varint.size(mh);
        long digestLen = Varint.decode(buf, p, limit);
        p += Varint.size(digestLen);
        if (digestLen > MAX_DIGEST_BYTES) {
            throw new DecodeException("bad_cid", "multihash digest too long: " + digestLen);
        }
        if (mh == HASH_SHA2_256 && digestLen != 32) {
            throw new DecodeException("bad_cid", "sha2-256 digest must be 32 bytes, got " + digestLen);
        }
        if (limit - p < digestLen) {
            throw new DecodeException("bad_cid", "truncated multihash digest");
        }
        return p + (int) digestLen - off;
    }

    /** Parses a binary CID that must span exactly {@code buf[off, off+len)}. */
    public static Cid decode(byte[] buf, int off, int len) {
        int n = binaryLength(buf, off, off + len);
        if (n != len) {
            throw new DecodeException("bad_cid", "trailing bytes after CID");
        }
        return fromValidated(Arrays.copyOfRange(buf, off, off + len));
    }

    public static Cid decode(byte[] binary) {
        return decode(binary, 0, binary.length);
    }

    private static Cid fromValidated(byte[] b) {
        if (b.length == 34 && b[0] == HASH_SHA2_256 && b[1] == 0x20) {
            return new Cid(b, 0, CODEC_DAG_PB, HASH_SHA2_256, 2);
        }
        int p = 1;
        long codec = Varint.decode(b, p, b.length);
        p += Varint.size(codec);
        long mh = Varint.decode(b, p, b.length);
        p += Varint.size(mh);
        long digestLen = Varint.decode(b, p, b.length);
        p += Varint.size(digestLen);
        return new Cid(b, 1, (int) Math.min(codec, Integer.MAX_VALUE), (int) Math.min(mh, Integer.MAX_VALUE), p);
    }

    /**
     * Parses the string form: multibase base32-lower ({@code b...}) for CIDv1, base58btc
     * ({@code Qm...}) for CIDv0.
     *
     * @throws DecodeException {@code bad_cid} (or a base-encoding reason) on anything else
     */
    public static Cid parse(String s) {
        if (s.length() == 46 && s.startsWith("Qm")) {
            return decode(Base58.decode(s));
        }
        if (s.length() < 2 || s.charAt(0) != 'b') {
            throw new DecodeException("bad_cid", "CID string must be base32 'b...' (v1) or 'Qm...' (v0)");
        }
        byte[] binary = Base32.decode(s, 1);
        if (binary.length > 0 && binary[0] != 1) {
            throw new DecodeException("bad_cid", "base32 CID must be version 1");
        }
        return decode(binary);
    }

    /** CIDv1 sha2-256 of {@code data[off, off+len)} with the given codec. */
    public static Cid of(int codec, byte[] data, int off, int len) {
        int codecLen = Varint.size(codec);
        byte[] b = new byte[1 + codecLen + 2 + 32];
        b[0] = 1;
        Varint.encode(codec, b, 1);
        int p = 1 + codecLen;
        b[p] = HASH_SHA2_256;
        b[p + 1] = 0x20;
        Sha256.digestInto(data, off, len, b, p + 2);
        return new Cid(b, 1, codec, HASH_SHA2_256, p + 2);
    }

    /** The CID of a DAG-CBOR block (a record, an MST node, a commit). */
    public static Cid ofDagCbor(byte[] data, int off, int len) {
        return of(CODEC_DAG_CBOR, data, off, len);
    }

    public static Cid ofDagCbor(byte[] data) {
        return ofDagCbor(data, 0, data.length);
    }

    public static Cid ofRaw(byte[] data, int off, int len) {
        return of(CODEC_RAW, data, off, len);
    }

    /**
     * The record CID string ({@code bafyrei...}) of a DAG-CBOR payload, as the stream emits it: bytes
     * {@code 01 71 12 20} + sha256, base32 lower, prefix {@code b}.
     */
    public static String dagCborString(byte[] data, int off, int len) {
        byte[] bin = new byte[SHA256_V1_BYTES];
        bin[0] = 1;
        bin[1] = CODEC_DAG_CBOR;
        bin[2] = HASH_SHA2_256;
        bin[3] = 0x20;
        Sha256.digestInto(data, off, len, bin, 4);
        byte[] text = new byte[1 + Base32.encodedLength(SHA256_V1_BYTES)];
        text[0] = 'b';
        Base32.encode(bin, 0, SHA256_V1_BYTES, text, 1);
        return new String(text, StandardCharsets.US_ASCII);
    }

    /**
     * Whether {@code data[off, off+len)} hashes to this CID's digest.
     *
     * @throws DecodeException {@code unsupported_hash} when the multihash is not sha2-256
     */
    public boolean matches(byte[] data, int off, int len) {
        if (mhCode != HASH_SHA2_256) {
            throw new DecodeException("unsupported_hash", "cannot verify multihash code 0x" + Integer.toHexString(mhCode));
        }
        return Sha256.matches(data, off, len, bytes, digestOffset);
    }

    public int version() {
        return version;
    }

    public int codec() {
        return codec;
    }

    /** The multihash function code (0x12 = sha2-256). */
    public int multihashCode() {
        return mhCode;
    }

    public byte[] digest() {
        return Arrays.copyOfRange(bytes, digestOffset, bytes.length);
    }

    /** The binary form (what tag 42 carries after its 0x00 prefix, and what CAR frames start with). */
    public byte[] toBytes() {
        return bytes.clone();
    }

    public int binaryLength() {
        return bytes.length;
    }

    public void writeTo(byte[] dst, int off) {
        System.arraycopy(bytes, 0, dst, off, bytes.length);
    }

    /** Whether {@code buf[off, off+len)} is exactly this CID's binary form. */
    public boolean equalsBinary(byte[] buf, int off, int len) {
        return Arrays.equals(bytes, 0, bytes.length, buf, off, off + len);
    }

    /** The string form of the binary CID {@code buf[off, off+len)}, whose structure the caller has checked. */
    public static String toString(byte[] buf, int off, int len) {
        if (buf[off] != 1) {
            return Base58.encode(buf, off, len);
        }
        byte[] text = new byte[1 + Base32.encodedLength(len)];
        text[0] = 'b';
        Base32.encode(buf, off, len, text, 1);
        return new String(text, StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
        String t = text;
        if (t == null) {
            t = toString(bytes, 0, bytes.length);
            text = t;
        }
        return t;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Cid && Arrays.equals(((Cid) o).bytes, bytes);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            // a racing thread computes the same value: the field needs no synchronisation (as String's)
            h = Arrays.hashCode(bytes);
            hash = h;
        }
        return h;
    }
}
