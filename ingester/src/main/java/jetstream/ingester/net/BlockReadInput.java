package jetstream.ingester.net;

import java.io.IOException;
import java.io.InputStream;

/** An input stream that reads single bytes through its block read (the only one its subclasses implement). */
abstract class BlockReadInput extends InputStream {
    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public abstract int read(byte[] b, int off, int len) throws IOException;
}
