package jetstream.atproto.firehose;

import java.io.IOException;
import java.io.InputStream;
import jetstream.atproto.DecodeException;

/**
 * Reads a capture of relay frames: {@code [u32 LE length][frame bytes]...} back to back (the layout
 * of the corpus {@code relay_frames.bin}). A length beyond {@link #MAX_FRAME_BYTES} or past the end
 * of the input is a {@link DecodeException}; after one the rest of the file cannot be framed.
 */
public final class RelayFrameFile {
    /** Larger than any legal frame: a commit's CAR diff is capped at 2,000,000 bytes. */
    public static final int MAX_FRAME_BYTES = 16 * 1024 * 1024;

    private final InputStream in;
    private long offset;

    public RelayFrameFile(InputStream in) {
        this.in = in;
    }

    /** Byte offset in the input of the next length prefix. */
    public long offset() {
        return offset;
    }

    /** The next frame, or null at a clean end of input. */
    public byte[] next() throws IOException {
        byte[] prefix = in.readNBytes(4);
        if (prefix.length == 0) {
            return null;
        }
        if (prefix.length < 4) {
            throw new DecodeException("frame_file_truncated", "input ends inside a length prefix at offset " + offset);
        }
        long len = (prefix[0] & 0xffL) | (prefix[1] & 0xffL) << 8 | (prefix[2] & 0xffL) << 16 | (prefix[3] & 0xffL) << 24;
        if (len > MAX_FRAME_BYTES) {
            throw new DecodeException("frame_file_too_large", "frame of " + len + " bytes at offset " + offset);
        }
        byte[] frame = in.readNBytes((int) len);
        if (frame.length != len) {
            throw new DecodeException("frame_file_truncated", "frame at offset " + offset + " promises " + len
                    + " bytes, " + frame.length + " remain");
        }
        offset += 4 + len;
        return frame;
    }
}
