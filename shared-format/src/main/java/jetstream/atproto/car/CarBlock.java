package jetstream.atproto.car;

import java.util.Arrays;
import jetstream.atproto.cid.Cid;

/**
 * One verified CAR block: its CID and its bytes as a slice of {@link #buffer()}. Blocks read from a
 * byte array alias that array; blocks read from a stream own their buffer.
 */
public final class CarBlock {
    private final Cid cid;
    private final byte[] buffer;
    private final int offset;
    private final int length;

    public CarBlock(Cid cid, byte[] buffer, int offset, int length) {
        this.cid = cid;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
    }

    public Cid cid() {
        return cid;
    }

    public byte[] buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public int length() {
        return length;
    }

    public byte[] copyData() {
        return Arrays.copyOfRange(buffer, offset, offset + length);
    }
}
