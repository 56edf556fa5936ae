package jetstream.segment.io;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/** Positional read helper. */
final class Channels {
    private Channels() {}

    static void readFully(FileChannel channel, ByteBuffer dst, long position) throws IOException {
        long pos = position;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, pos);
            if (n < 0) {
                throw new EOFException("unexpected end of file at " + pos);
            }
            pos += n;
        }
    }
}
