package jetstream.atproto.firehose;

import java.util.Arrays;

/** A read-only view of {@code buffer[offset, offset+length)}; aliases the frame it was decoded from. */
public record ByteSlice(byte[] buffer, int offset, int length) {
    public static final ByteSlice EMPTY = new ByteSlice(new byte[0], 0, 0);

    public ByteSlice {
        if (offset < 0 || length < 0 || offset > buffer.length - length) {
            throw new IndexOutOfBoundsException("slice [" + offset + ", +" + length + ") outside array of " + buffer.length);
        }
    }

    public byte[] toByteArray() {
        return Arrays.copyOfRange(buffer, offset, offset + length);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ByteSlice s
                && Arrays.equals(buffer, offset, offset + length, s.buffer, s.offset, s.offset + s.length);
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (int i = offset; i < offset + length; i++) {
            h = 31 * h + buffer[i];
        }
        return h;
    }

    @Override
    public String toString() {
        return "ByteSlice[" + length + " bytes]";
    }
}
