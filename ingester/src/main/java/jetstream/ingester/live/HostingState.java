package jetstream.ingester.live;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The verifier's hosting state of an account, {@code sync/host/<did>} (docs/metadata-keys.md): {@code 0x01},
 * active u8, uvarint status length, status, the upstream seq of the {@code #account} event as u64
 * BE, uvarint time length, time. Written from every accepted {@code #account}; its seq is the
 * fallback of the account replay ratchet (docs/lifecycle.md: Live path step 4).
 */
public record HostingState(boolean active, String status, long seq, String time) {

    public byte[] encode() {
        byte[] s = (status == null ? "" : status).getBytes(StandardCharsets.UTF_8);
        byte[] t = (time == null ? "" : time).getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(2 + 10 + s.length + 8 + t.length);
        out.write(1);
        out.write(active ? 1 : 0);
        uvarint(out, s.length);
        out.write(s, 0, s.length);
        out.writeBytes(ByteBuffer.allocate(8).putLong(seq).array());
        uvarint(out, t.length);
        out.write(t, 0, t.length);
        return out.toByteArray();
    }

    /** Decodes a stored value; anything malformed is our own corruption. */
    public static HostingState decode(String key, byte[] v) {
        try {
            ByteBuffer b = ByteBuffer.wrap(v);
            if (b.get() != 1) {
                throw new IllegalStateException("metadata key " + key + " is not a version-1 hosting state");
            }
            int active = b.get();
            if (active != 0 && active != 1) {
                throw new IllegalStateException("metadata key " + key + " has active byte " + active);
            }
            String status = string(b);
            long seq = b.getLong();
            String time = string(b);
            if (b.hasRemaining()) {
                throw new IllegalStateException("metadata key " + key + " has trailing bytes");
            }
            return new HostingState(active == 1, status, seq, time);
        } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
            throw new IllegalStateException("metadata key " + key + " is truncated or malformed", e);
        }
    }

    private static String string(ByteBuffer b) {
        long n = 0;
        int shift = 0;
        while (true) {
            int x = b.get() & 0xFF;
            n |= (long) (x & 0x7F) << shift;
            if (x < 0x80) {
                break;
            }
            shift += 7;
            if (shift > 28) {
                throw new IllegalArgumentException("overlong uvarint");
            }
        }
        if (n > b.remaining()) {
            throw new IllegalArgumentException("length past the end");
        }
        byte[] s = new byte[(int) n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    private static void uvarint(ByteArrayOutputStream out, int n) {
        while (n >= 0x80) {
            out.write((n & 0x7F) | 0x80);
            n >>>= 7;
        }
        out.write(n);
    }
}
