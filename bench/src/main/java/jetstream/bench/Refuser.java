package jetstream.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

/**
 * A stand-in server for warming the flood generator's own code before a measured flood: one thread that answers
 * every request 503 with {@code Retry-After} after its first 16 KiB or its whole head, whichever comes first (as the
 * gateway answers a head over its budget), then reads and drops the rest until the client closes. The generator stands for remote machines; warmed here, its
 * JIT compilation no longer takes the gateway's cores during the gateway's first flood.
 */
final class Refuser implements AutoCloseable {
    private static final byte[] ANSWER = ("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n"
            + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    private static final int ANSWER_AFTER = 16 << 10;

    private final ServerSocketChannel server;
    private final Selector selector;
    private final Thread thread;
    private volatile boolean running = true;

    Refuser() throws IOException {
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0), 1024);
        server.configureBlocking(false);
        selector = Selector.open();
        server.register(selector, SelectionKey.OP_ACCEPT);
        thread = new Thread(this::serve, "refuser");
        thread.setDaemon(true);
        thread.start();
    }

    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    private void serve() {
        ByteBuffer buf = ByteBuffer.allocateDirect(64 << 10);
        try {
            while (running) {
                selector.select(100);
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        SocketChannel c = server.accept();
                        if (c != null) {
                            c.configureBlocking(false);
                            c.register(selector, SelectionKey.OP_READ, new long[1]);
                        }
                    } else if (k.isReadable()) {
                        read((SocketChannel) k.channel(), k, buf);
                    }
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void read(SocketChannel c, SelectionKey k, ByteBuffer buf) throws IOException {
        long[] seen = (long[]) k.attachment();
        buf.clear();
        int n;
        try {
            n = c.read(buf);
        } catch (IOException reset) {
            n = -1;
        }
        if (n < 0) {
            k.cancel();
            c.close();
            return;
        }
        boolean answered = seen[0] >= ANSWER_AFTER;
        seen[0] += n;
        if (!answered && (seen[0] >= ANSWER_AFTER || headEnds(buf))) {
            seen[0] = ANSWER_AFTER;
            // a 90-byte answer into an empty socket buffer: written whole
            c.write(ByteBuffer.wrap(ANSWER));
        }
    }

    /** The read ended with the blank line that ends a head (a request under 16 KiB). */
    private static boolean headEnds(ByteBuffer buf) {
        int p = buf.position();
        return p >= 4 && buf.get(p - 4) == '\r' && buf.get(p - 3) == '\n' && buf.get(p - 2) == '\r' && buf.get(p - 1) == '\n';
    }

    @Override
    public void close() throws IOException {
        running = false;
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        selector.close();
        server.close();
    }
}
