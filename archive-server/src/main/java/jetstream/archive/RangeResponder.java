package jetstream.archive;

import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Writes a segment or block response from its mapping: {@link ServeContent}'s conditional and range decision
 * turned into status, headers and body (single range, multipart/byteranges, 304, 412, 416), the body written in
 * chunks that wrap the mapping, paced by the response's write queue.
 */
final class RangeResponder {
    private static final int CHUNK = 4 * 1024 * 1024;

    private RangeResponder() {}

    /**
     * Sends {@code content} with Go {@code ServeContent} semantics; HEAD gets the same headers and no
     * body. Returns the body bytes sent.
     *
     * @param cacheControl the {@code Cache-Control} of a segment or block response now
     */
    static long serve(RoutingContext ctx, String etag, long mtimeMillis, ByteBuffer content, String cacheControl) {
        HttpServerRequest req = ctx.request();
        HttpServerResponse res = ctx.response();
        long size = content.remaining();
        boolean head = req.method() == HttpMethod.HEAD;
        res.putHeader("Content-Type", "application/octet-stream").putHeader("ETag", etag)
                .putHeader("Cache-Control", cacheControl).putHeader("Accept-Ranges", "bytes")
                .putHeader("Last-Modified", ServeContent.httpDate(mtimeMillis));
        ServeContent.Decision d = ServeContent.decide(req.method().name(), req::getHeader, etag, mtimeMillis, size);
        switch (d.outcome()) {
            case NOT_MODIFIED -> {
                res.headers().remove("Content-Type").remove("Last-Modified");
                res.setStatusCode(304).end();
                return 0;
            }
            case PRECONDITION_FAILED -> {
                res.setStatusCode(412).putHeader("Content-Length", "0").end();
                return 0;
            }
            case NOT_SATISFIABLE -> {
                if (d.message().endsWith("failed to overlap")) {
                    res.putHeader("Content-Range", "bytes */" + size);
                }
                byte[] msg = (d.message() + "\n").getBytes(StandardCharsets.UTF_8);
                res.putHeader("Content-Type", "text/plain; charset=utf-8").putHeader("X-Content-Type-Options", "nosniff")
                        .setStatusCode(416).end(Buffer.buffer(msg));
                return 0;
            }
            case FULL -> {
                res.setStatusCode(200).putHeader("Content-Length", Long.toString(size));
                return send(ctx, head, List.of(content));
            }
            case PARTIAL -> {
                long[] r = d.ranges().get(0);
                res.setStatusCode(206).putHeader("Content-Range", contentRange(r, size))
                        .putHeader("Content-Length", Long.toString(r[1]));
                return send(ctx, head, List.of(content.slice((int) r[0], (int) r[1])));
            }
            default -> {
                String boundary = boundary();
                List<ByteBuffer> parts = new ArrayList<>();
                long total = 0;
                for (int i = 0; i < d.ranges().size(); i++) {
                    long[] r = d.ranges().get(i);
                    String h = (i == 0 ? "" : "\r\n") + "--" + boundary + "\r\nContent-Range: " + contentRange(r, size)
                            + "\r\nContent-Type: application/octet-stream\r\n\r\n";
                    ByteBuffer hb = ByteBuffer.wrap(h.getBytes(StandardCharsets.US_ASCII));
                    parts.add(hb);
                    parts.add(content.slice((int) r[0], (int) r[1]));
                    total += hb.remaining() + r[1];
                }
                ByteBuffer tail = ByteBuffer.wrap(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII));
                parts.add(tail);
                total += tail.remaining();
                res.setStatusCode(206).putHeader("Content-Type", "multipart/byteranges; boundary=" + boundary)
                        .putHeader("Content-Length", Long.toString(total));
                return send(ctx, head, parts);
            }
        }
    }

    private static String contentRange(long[] r, long size) {
        return "bytes " + r[0] + "-" + (r[0] + r[1] - 1) + "/" + size;
    }

    private static String boundary() {
        byte[] b = new byte[30];
        ThreadLocalRandom.current().nextBytes(b);
        StringBuilder sb = new StringBuilder(60);
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }

    /**
     * Writes the pieces without copying them: each chunk wraps the mapped region, honouring the
     * response's write queue, so a 256 MiB segment never sits in the heap.
     */
    private static long send(RoutingContext ctx, boolean head, List<ByteBuffer> pieces) {
        HttpServerResponse res = ctx.response();
        if (head) {
            res.end();
            return 0;
        }
        long total = 0;
        List<ByteBuffer> chunks = new ArrayList<>();
        for (ByteBuffer p : pieces) {
            total += p.remaining();
            for (int at = 0; at < p.remaining(); at += CHUNK) {
                chunks.add(p.slice(at, Math.min(CHUNK, p.remaining() - at)));
            }
        }
        ArchiveLimits.Slot slot = ctx.get(ArchiveLimits.Slot.KEY);
        new ChunkWriter(res, chunks, slot == null ? null : slot.holdUntilSent()).run();
        return total;
    }

    /** Feeds chunks to the response, pausing while its write queue is full. */
    private static final class ChunkWriter implements Runnable {
        private final HttpServerResponse res;
        private final List<ByteBuffer> chunks;
        private final Runnable sent;
        private int next;

        /** {@code sent} (may be null) runs once the last byte is written to the socket or the write fails. */
        ChunkWriter(HttpServerResponse res, List<ByteBuffer> chunks, Runnable sent) {
            this.res = res;
            this.chunks = chunks;
            this.sent = sent;
        }

        @Override
        public synchronized void run() {
            while (next < chunks.size()) {
                if (res.closed()) {
                    return;
                }
                if (res.writeQueueFull()) {
                    res.drainHandler(v -> run());
                    if (res.writeQueueFull()) {
                        return;
                    }
                    // The queue drained before the handler was in place (this may run off the event
                    // loop): keep writing here, or the download would stall with no drain to come.
                }
                res.write(Buffer.buffer(Unpooled.wrappedBuffer(chunks.get(next++))));
            }
            if (!res.ended() && !res.closed()) {
                io.vertx.core.Future<Void> done = res.end();
                if (sent != null) {
                    done.onComplete(v -> sent.run());
                }
            }
        }
    }
}
