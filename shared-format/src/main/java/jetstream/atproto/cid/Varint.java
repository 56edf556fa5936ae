package jetstream.atproto.cid;

import jetstream.atproto.DecodeException;

/**
 * Unsigned LEB128 varints as multiformats uses them (CID fields, CAR frame lengths). Decoding is
 * strict: at most 9 bytes (63 bits) and minimal, so a value has exactly one encoding and the
 * number of bytes consumed is always {@link #size(long)} of the result.
 */
public final class Varint {
    /** multiformats unsigned-varint caps encodings at 9 bytes. */
    public static final int MAX_BYTES = 9;

    private Varint() {}

    /**
     * Decodes the varint at {@code buf[off]}, reading no further than {@code limit} (exclusive).
     *
     * @throws DecodeException {@code bad_varint} on truncation, overlong (non-minimal) or oversized encodings
     */
    public static long decode(byte[] buf, int off, int limit) {
        long value = 0;
        for (int i = 0; i < MAX_BYTES; i++) {
            if (off + i >= limit) {
                throw new DecodeException("bad_varint", "truncated varint");
            }
            int b = buf[off + i] & 0xff;
            value |= (long) (b & 0x7f) << (7 * i);
            if ((b & 0x80) == 0) {
                if (b == 0 && i > 0) {
                    throw new DecodeException("bad_varint", "non-minimal varint");
                }
                return value;
            }
        }
        throw new DecodeException("bad_varint", "varint longer than 9 bytes");
    }

    /** Bytes the minimal encoding of {@code value} (which must be non-negative) takes. */
    public static int size(long value) {
        int n = 1;
        while ((value >>>= 7) != 0) {
            n++;
        }
        return n;
    }

    /** Writes the minimal encoding of {@code value} (non-negative) at {@code dst[off]}; returns bytes written. */
    public static int encode(long value, byte[] dst, int off) {
        if (value < 0) {
            throw new IllegalArgumentException("varint value must be non-negative: " + value);
        }
        int i = off;
        while ((value & ~0x7fL) != 0) {
            dst[i++] = (byte) ((value & 0x7f) | 0x80);
            value >>>= 7;
        }
        dst[i++] = (byte) value;
        return i - off;
    }
}
