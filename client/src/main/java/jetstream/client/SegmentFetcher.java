package jetstream.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.segment.BlockIndex;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentLimits;

/**
 * Reads one whole segment without ever holding it (docs/client.md: Downloads, streamed): {@link #open} fetches the
 * 256-byte header with a range request (pinning the file's strong ETag) and then the footer's block
 * index with a second range pinned by {@code If-Range}; {@link #range} streams a block-aligned byte
 * range and hands each complete block frame to a sink as it arrives. A range cut short resumes at the
 * block it was reading. A range that comes back as anything but 206 with the pinned ETag means the file
 * was rewritten (e.g. by compaction) since the opening: {@link Rewritten}, and the caller re-opens.
 * A server without range support is read as one plain stream ({@link #whole}).
 */
final class SegmentFetcher {
    static final long MAX_SEGMENT_BYTES = 1L << 30;
    static final String GET_SEGMENT = "network.bsky.jetstream.getSegment";
    static final String GET_BLOCK = "network.bsky.jetstream.getBlock";

    private final XrpcCalls xrpc;
    private final AtomicLong bytes;

    SegmentFetcher(XrpcCalls xrpc, AtomicLong bytes) {
        this.xrpc = xrpc;
        this.bytes = bytes;
    }

    /** A segment's shape; {@code etag == null} when the server does not serve ranges (read it whole). */
    record Layout(String etag, long size, SegmentHeader header, BlockIndex index) {
        static final Layout NO_RANGES = new Layout(null, -1, null, null);
    }

    /** Receives each complete block frame; {@code entry} is null when no block index is known. */
    interface BlockSink {
        void accept(int block, BlockIndexEntry entry, byte[] frame) throws InterruptedException;
    }

    /** A range answered from another generation of the file than the opening. */
    static final class Rewritten extends JetstreamException {
        private static final long serialVersionUID = 1L;

        Rewritten(String message) {
            super(message);
        }
    }

    private URI uri(String name) {
        return xrpc.uri(GET_SEGMENT, "name=" + XrpcCalls.enc(name));
    }

    /**
     * Segment bodies go over HTTP/1.1 whatever the client prefers: there an unread body is held back
     * by TCP, while HTTP/2's receive windows let the JDK client buffer tens of MiB per connection
     * ahead of the reader, outside the prefetch budget.
     */
    private HttpResponse<InputStream> send(URI u, String range, String ifRange) throws IOException, InterruptedException {
        var b = xrpc.request(u, true).version(HttpClient.Version.HTTP_1_1).GET();
        if (range != null) {
            b.header("Range", range);
        }
        if (ifRange != null) {
            b.header("If-Range", ifRange);
        }
        return xrpc.http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    Layout open(String name) {
        URI u = uri(name);
        return xrpc.withRetries("getSegment " + name, () -> {
            HttpResponse<InputStream> r = send(u, "bytes=0-" + (SegmentHeader.SIZE - 1), null);
            int status = r.statusCode();
            if (status == 200) {
                r.body().close();
                return Layout.NO_RANGES;
            }
            if (status != 206) {
                throw XrpcCalls.failure(status, xrpc.drain(r), r);
            }
            long[] range = contentRange(r);
            String etag = r.headers().firstValue("ETag").filter(SegmentFetcher::strong).orElse(null);
            if (range[0] != 0 || range[2] > MAX_SEGMENT_BYTES || etag == null) {
                r.body().close();
                if (etag == null) {
                    return Layout.NO_RANGES;
                }
                throw new JetstreamException(range[0] != 0 ? "getSegment answered range starting at " + range[0]
                        : "segment of " + range[2] + " bytes is above the 1 GiB limit");
            }
            byte[] hb = new byte[SegmentHeader.SIZE];
            try (InputStream in = r.body()) {
                readFully(in, hb, (int) Math.min(hb.length, range[1] + 1));
            }
            SegmentHeader h;
            try {
                h = SegmentHeader.parseSealed(hb, 0);
                h.validateFooterLayout(range[2]);
            } catch (SegmentException e) {
                throw new JetstreamException("segment " + name + " header: " + e.getMessage(), e);
            }
            int len = (int) (h.didBloomOffset() - h.blockIndexOffset());
            byte[] ib = new byte[len];
            if (len > 0) {
                HttpResponse<InputStream> ir = send(u, "bytes=" + h.blockIndexOffset() + "-" + (h.didBloomOffset() - 1), etag);
                try (InputStream in = pinned(ir, etag, range[2], h.blockIndexOffset(), h.didBloomOffset() - 1)) {
                    readFully(in, ib, len);
                }
            }
            try {
                return new Layout(etag, range[2], h, BlockIndex.parse(ib, 0, len, (int) h.blockCount(), h.footerOffset()));
            } catch (SegmentException e) {
                throw new JetstreamException("segment " + name + " block index: " + e.getMessage(), e);
            }
        });
    }

    /**
     * Streams blocks {@code [first, last]} of an opened segment (adjacent in the file) into
     * {@code sink}, resuming after a cut at the block being read.
     */
    void range(String name, Layout l, int first, int last, Task task, BlockSink sink) {
        URI u = uri(name);
        int[] next = {first};
        BlockIndexEntry tail = l.index().get(last);
        long end = tail.offset() + SegmentLimits.FRAME_PREFIX_SIZE + tail.compressedSize() - 1;
        xrpc.withRetries("getSegment " + name + " blocks " + first + "-" + last, () -> {
            long start = l.index().get(next[0]).offset();
            HttpResponse<InputStream> r = send(u, "bytes=" + start + "-" + end, l.etag());
            byte[] prefix = new byte[SegmentLimits.FRAME_PREFIX_SIZE];
            try (InputStream in = pinned(r, l.etag(), l.size(), start, end)) {
                task.streaming(in);
                while (next[0] <= last && !task.cancelled()) {
                    BlockIndexEntry e = l.index().get(next[0]);
                    readFully(in, prefix, prefix.length);
                    if (prefix(prefix) != e.compressedSize()) {
                        throw new JetstreamException("segment " + name + " block " + next[0] + " length prefix "
                                + prefix(prefix) + " disagrees with the index's " + e.compressedSize());
                    }
                    byte[] frame = new byte[(int) e.compressedSize()];
                    readFully(in, frame, frame.length);
                    sink.accept(next[0], e, frame);
                    next[0]++;
                }
            } finally {
                task.streaming(null);
            }
            return null;
        });
    }

    /** Streams every block of a segment from a server without range support; a retry skips what was handed over. */
    void whole(String name, Task task, BlockSink sink) {
        URI u = uri(name);
        int[] delivered = {0};
        xrpc.withRetries("getSegment " + name, () -> {
            HttpResponse<InputStream> r = send(u, null, null);
            if (r.statusCode() != 200) {
                throw XrpcCalls.failure(r.statusCode(), xrpc.drain(r), r);
            }
            byte[] hb = new byte[SegmentHeader.SIZE];
            byte[] prefix = new byte[SegmentLimits.FRAME_PREFIX_SIZE];
            try (InputStream in = r.body()) {
                task.streaming(in);
                readFully(in, hb, hb.length);
                SegmentHeader h;
                try {
                    h = SegmentHeader.parseSealed(hb, 0);
                } catch (SegmentException e) {
                    throw new JetstreamException("segment " + name + " header: " + e.getMessage(), e);
                }
                long pos = SegmentHeader.SIZE;
                for (int b = 0; pos < h.footerOffset() && !task.cancelled(); b++) {
                    readFully(in, prefix, prefix.length);
                    long len = prefix(prefix);
                    if (len < 0 || len > h.footerOffset() - pos - prefix.length) {
                        throw new JetstreamException("segment " + name + " block " + b + " length prefix " + len
                                + " runs past the footer");
                    }
                    byte[] frame = new byte[(int) len];
                    readFully(in, frame, frame.length);
                    pos += prefix.length + len;
                    if (b >= delivered[0]) {
                        sink.accept(b, null, frame);
                        delivered[0] = b + 1;
                    }
                }
            } finally {
                task.streaming(null);
            }
            return null;
        });
    }

    /** One getBlock answer: a bare zstd frame. */
    byte[] block(String segment, int block) {
        byte[] frame = xrpc.get(GET_BLOCK, "segment=" + XrpcCalls.enc(segment) + "&blockIndex=" + block, true);
        bytes.addAndGet(frame.length);
        return frame;
    }

    /** The body of a range answer pinned to {@code etag}; anything else means the file changed. */
    private InputStream pinned(HttpResponse<InputStream> r, String etag, long size, long start, long end)
            throws IOException {
        int status = r.statusCode();
        if (status == 200) {
            r.body().close();
            throw new Rewritten("range request answered 200 (file replaced)");
        }
        if (status != 206) {
            throw XrpcCalls.failure(status, xrpc.drain(r), r);
        }
        String got = r.headers().firstValue("ETag").orElse("");
        long[] range = contentRange(r);
        if (!got.equals(etag) || range[2] != size) {
            r.body().close();
            throw new Rewritten("ETag " + got + " / size " + range[2] + " differs from " + etag + " / " + size);
        }
        if (range[0] != start || range[1] != end) {
            r.body().close();
            throw new JetstreamException("getSegment answered range " + range[0] + "-" + range[1] + " for " + start
                    + "-" + end);
        }
        return r.body();
    }

    private void readFully(InputStream in, byte[] b, int len) throws IOException {
        int got = 0;
        while (got < len) {
            int n = xrpc.read(in, b, got, len - got);
            if (n < 0) {
                throw new IOException("body ended after " + got + " of " + len + " bytes");
            }
            got += n;
            bytes.addAndGet(n);
        }
    }

    private static long prefix(byte[] p) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = v << 8 | (p[i] & 0xFF);
        }
        return v;
    }

    private static boolean strong(String etag) {
        return etag.startsWith("\"") && etag.endsWith("\"") && etag.length() >= 2;
    }

    /** {@code bytes start-end/total} → {start, end, total}. */
    private static long[] contentRange(HttpResponse<?> r) {
        String v = r.headers().firstValue("Content-Range").orElse("");
        try {
            if (!v.startsWith("bytes ")) {
                throw new NumberFormatException();
            }
            int dash = v.indexOf('-');
            int slash = v.indexOf('/');
            long s = Long.parseLong(v.substring(6, dash));
            long e = Long.parseLong(v.substring(dash + 1, slash));
            long t = Long.parseLong(v.substring(slash + 1));
            if (s < 0 || e < s || e >= t) {
                throw new NumberFormatException();
            }
            return new long[] {s, e, t};
        } catch (RuntimeException ex) {
            throw new JetstreamException("getSegment answered 206 with a bad Content-Range '" + v + "'");
        }
    }
}
