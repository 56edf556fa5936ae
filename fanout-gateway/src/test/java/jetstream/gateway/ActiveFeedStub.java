package jetstream.gateway;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import jetstream.feed.FeedAuth;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.replay.ActiveBlockSource;
import jetstream.segment.ZstdFrames;

/**
 * The ingester's TCP feed as far as {@code READ_ACTIVE} goes, on 127.0.0.1: the challenge and HMAC
 * check of the handshake, then the ingester's own {@link ActiveBlockSource} over a segment directory
 * with a fixed durable watermark. Counts answered requests.
 */
final class ActiveFeedStub implements AutoCloseable {
    static final byte[] SECRET = "active-feed-stub-secret-0123456789".getBytes(StandardCharsets.UTF_8);

    private final ServerSocket server;
    private final ActiveBlockSource source;
    private final long durable;
    final AtomicInteger requests = new AtomicInteger();

    ActiveFeedStub(Path segments, long durable) throws IOException {
        this.source = new ActiveBlockSource(segments);
        this.durable = durable;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "active-feed-stub");
        t.setDaemon(true);
        t.start();
    }

    FeedClient.Remote remote() {
        return new FeedClient.Remote("127.0.0.1", server.getLocalPort(), SECRET, null);
    }

    private void accept() {
        while (!server.isClosed()) {
            try (Socket s = server.accept()) {
                answer(s);
            } catch (IOException | RuntimeException e) {
                // a closed server ends the loop; a broken connection or a refused reader is the reader's problem
            }
        }
    }

    private void answer(Socket s) throws IOException {
        byte[] nonce = FeedAuth.nonce();
        OutputStream out = new BufferedOutputStream(s.getOutputStream());
        out.write(FeedCodec.encode(new FeedFrame.AuthChallenge(nonce)));
        out.flush();
        InputStream in = s.getInputStream();
        if (!(read(in) instanceof FeedFrame.Auth a) || !FeedAuth.verify(SECRET, nonce, a.mac())
                || !(read(in) instanceof FeedFrame.ReadActive r)) {
            return;
        }
        long activeFrom;
        try (ZstdFrames zstd = new ZstdFrames()) {
            activeFrom = source.read(r.fromSeq(), r.untilSeq(), r.fromTime(), durable, r.maxBytes(), zstd,
                    (seg, off, min, max, n, frame) -> out.write(FeedCodec.encodeActiveBlock(seg, off, min, max, n, frame)));
        }
        out.write(FeedCodec.encode(new FeedFrame.ActiveEnd(activeFrom, durable)));
        out.flush();
        requests.incrementAndGet();
    }

    private static FeedFrame read(InputStream in) throws IOException {
        byte[] head = in.readNBytes(FeedCodec.LENGTH_PREFIX);
        int len = FeedCodec.contentLength(head, 0);
        return FeedCodec.decode(in.readNBytes(len), 0, len);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
