package jetstream.replay;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import jetstream.atproto.DecodeException;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.FeedTcp;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.ZstdFrames;

/**
 * A remote-mode gateway's view of the writer's active segments: complete, durable blocks fetched from
 * the ingester's TCP feed ({@code READ_ACTIVE}, one short authenticated connection per request, about
 * {@value #REQUEST_BYTES} bytes of block frames each), decoded once into the shared {@link BlockCache}
 * under the key a local reader gives an active block ({@code -(segment + 1)}, frame offset). A small
 * map from first seq to cache key lets later readers of the same window find a block without asking
 * again; entries of segments sealed since (the archive's now) are dropped. Every request has a deadline
 * and a byte cap. Thread-safe; blocks on the network: call it off any event loop.
 */
public final class FeedActiveBlocks {
    /**
     * {@code activeFrom}: the seq after the ingester's last sealed segment, as last heard; {@code body}: the
     * decoded body of the first block whose rows reach {@code seq}, null when no such block is durable yet.
     */
    public record Found(long activeFrom, byte[] body) {}

    private record Held(long maxSeq, BlockCache.Key key) {}

    /** Block frame bytes asked for per request. */
    static final long REQUEST_BYTES = 1 << 20;

    private final FeedClient.Remote remote;
    private final Duration deadline;
    private final BlockCache cache;
    /** Fetched blocks by first seq; guarded by this. */
    private final TreeMap<Long, Held> held = new TreeMap<>();
    private long activeFrom = 1;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong frameBytes = new AtomicLong();

    public FeedActiveBlocks(FeedClient.Remote remote, Duration deadline, BlockCache cache) {
        this.remote = remote;
        this.deadline = deadline;
        this.cache = cache;
    }

    /** Requests made to the ingester. */
    public long requests() {
        return requests.get();
    }

    /** Compressed block bytes received from the ingester. */
    public long frameBytes() {
        return frameBytes.get();
    }

    /** The block holding {@code seq} or the first after it, from the cache or the ingester. */
    public Found find(long seq, long until, ZstdFrames zstd) {
        synchronized (this) {
            Map.Entry<Long, Held> e = held.floorEntry(seq);
            if (e != null && e.getValue().maxSeq() >= seq) {
                byte[] body = cache.get(e.getValue().key());
                if (body != null) {
                    return new Found(activeFrom, body);
                }
                held.remove(e.getKey());
            }
        }
        Answer a = fetch(seq, until, 0, zstd);
        return new Found(a.activeFrom(), a.first());
    }

    /**
     * A time cursor past the archive's last seal: the first seq at or above {@code from} witnessed at or
     * after {@code ts} among the durable active blocks ({@code seq} -1 when every one is older; then
     * {@code scannedTo} is the seq after them, where the ring takes over). When the ingester sealed seqs
     * at or above {@code from} since the caller's listing, the answer is {@code from}: lower than exact,
     * never higher. The blocks fetched are cached for the replay that follows.
     */
    public ActiveTimeSearch.Result firstAtOrAfter(long ts, long from, ZstdFrames zstd) {
        Answer a = fetch(from, 0, ts, zstd);
        if (from < a.activeFrom()) {
            return new ActiveTimeSearch.Result(from, from);
        }
        if (a.first() == null) {
            return new ActiveTimeSearch.Result(-1, Math.max(from, a.durableSeq() + 1));
        }
        BlockView view = new BlockView().decode(a.first(), 0, a.first().length);
        for (int i = 0; i < view.size(); i++) {
            if (view.seq(i) >= from && view.witnessedAt(i) >= ts) {
                return new ActiveTimeSearch.Result(view.seq(i), view.seq(i));
            }
        }
        return new ActiveTimeSearch.Result(-1, view.seq(view.size() - 1) + 1);
    }

    /** One answer: the first block's body (null when none came) and the ingester's boundaries. */
    private record Answer(long activeFrom, long durableSeq, byte[] first) {}

    private Answer fetch(long seq, long until, long fromTime, ZstdFrames zstd) {
        try {
            return request(seq, until, fromTime, zstd);
        } catch (IOException e) {
            throw new UncheckedIOException("active blocks from the feed at " + remote.host() + ":" + remote.port()
                    + ": " + e.getMessage(), e);
        }
    }

    private Answer request(long seq, long until, long fromTime, ZstdFrames zstd) throws IOException {
        requests.incrementAndGet();
        long end = System.nanoTime() + deadline.toNanos();
        long cap = REQUEST_BYTES + FeedCodec.MAX_CONTENT_BYTES;
        long read = 0;
        byte[] first = null;
        BlockView view = new BlockView();
        try (Socket s = FeedTcp.socket(remote)) {
            InputStream in = FeedTcp.open(s, remote, (int) Math.max(1, deadline.toMillis()),
                    new FeedFrame.ReadActive(seq, until, fromTime, REQUEST_BYTES));
            for (;;) {
                long left = (end - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new SocketTimeoutException("no complete answer within " + deadline.toMillis() + " ms");
                }
                s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                byte[] head = in.readNBytes(FeedCodec.LENGTH_PREFIX);
                if (head.length < FeedCodec.LENGTH_PREFIX) {
                    throw new IOException("feed closed before the end of its answer");
                }
                int len = FeedCodec.contentLength(head, 0);
                read += FeedCodec.LENGTH_PREFIX + len;
                if (read > cap) {
                    throw new IOException("answer over its cap of " + cap + " bytes");
                }
                byte[] body = in.readNBytes(len);
                if (body.length < len) {
                    throw new IOException("feed closed inside a frame");
                }
                FeedFrame f = FeedCodec.decode(body, 0, len);
                if (f instanceof FeedFrame.ActiveBlock b) {
                    frameBytes.addAndGet(b.frame().length);
                    byte[] decoded = decode(b, view, zstd);
                    BlockCache.Key key = new BlockCache.Key(-(b.segment() + 1), b.offset());
                    cache.put(key, decoded);
                    synchronized (this) {
                        held.put(b.minSeq(), new Held(b.maxSeq(), key));
                    }
                    if (first == null && b.maxSeq() >= seq) {
                        first = decoded;
                    }
                } else if (f instanceof FeedFrame.ActiveEnd e) {
                    synchronized (this) {
                        activeFrom = Math.max(activeFrom, e.activeFrom());
                        // sealed since: the archive serves those seqs now
                        held.headMap(activeFrom).clear();
                        return new Answer(activeFrom, e.durableSeq(), first);
                    }
                } else {
                    throw new DecodeException("feed_protocol", "frame type 0x" + Integer.toHexString(f.type() & 0xFF)
                            + " in an active-block answer");
                }
            }
        }
    }

    /** The block's body, checked against the envelope the ingester sent with it. */
    private static byte[] decode(FeedFrame.ActiveBlock b, BlockView view, ZstdFrames zstd) {
        view.decodeFrame(zstd, b.frame(), 0, b.frame().length, -1);
        if (view.size() != b.eventCount() || view.seq(0) != b.minSeq() || view.seq(view.size() - 1) != b.maxSeq()) {
            throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, "active block at " + b.offset()
                    + " of segment " + b.segment() + " does not hold the seqs " + b.minSeq() + ".." + b.maxSeq()
                    + " it was sent with");
        }
        byte[] out = new byte[view.bodyLength()];
        System.arraycopy(view.buffer(), view.bodyOffset(), out, 0, out.length);
        return out;
    }
}
