package jetstream.replay;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

/**
 * The archive-server's XRPC read methods (docs/http-api.md: listSegments, getSegment, getBlock) as a
 * remote-mode gateway uses them: {@code listSegments} for the catalog, {@code getSegment} with {@code Range} for a segment's header
 * and block index, {@code getBlock} for block frames. The base URL is the archive-server or a CDN in
 * front of it. Every request has a deadline (headers and body) and a byte cap; the answer's ETag names
 * the checksum it belongs to, so bytes of a rewritten segment (or a CDN's copy of the old one) are never
 * mixed with another version's index. Blocking: call it off any event loop.
 */
public final class ArchiveHttp {
    /** One {@code listSegments} item. */
    public record Listed(String name, long index, long checksum, long minSeq, long maxSeq, long minWitnessedAt,
                         long maxWitnessedAt) {}

    private static final String NS = "/xrpc/network.bsky.jetstream.";
    private static final JsonFactory JSON = new JsonFactory();
    /** listSegments answers at most 1,000 items of ~250 bytes. */
    static final int LIST_PAGE = 1000;
    private static final int LIST_CAP = 2 << 20;
    /** A one-segment plan: at most one block range per block of the segment, ~30 bytes each. */
    private static final int PLAN_CAP = 16 << 20;
    /** An error answer is a small XRPC envelope. */
    private static final int ERROR_CAP = 64 << 10;

    private final HttpClient http;
    private final URI base;
    private final Duration deadline;
    private volatile boolean reachable;
    private volatile String lastFailure = "not contacted yet";

    public ArchiveHttp(URI base, Duration deadline) {
        String b = base.toString();
        this.base = URI.create(b.endsWith("/") ? b.substring(0, b.length() - 1) : b);
        this.deadline = deadline;
        this.http = HttpClient.newBuilder().connectTimeout(deadline).followRedirects(HttpClient.Redirect.NORMAL).build();
    }

    public URI base() {
        return base;
    }

    /** Whether the last request reached the archive and got a usable answer (false until one did). */
    public boolean reachable() {
        return reachable;
    }

    public String lastFailure() {
        return lastFailure;
    }

    /** Every sealed segment, in index order (pages of {@value #LIST_PAGE}). */
    public List<Listed> list() {
        List<Listed> out = new ArrayList<>();
        String cursor = null;
        do {
            String q = "listSegments?limit=" + LIST_PAGE + (cursor == null ? "" : "&cursor=" + enc(cursor));
            byte[] body = ok(get(q, null, null, LIST_CAP), q);
            cursor = parseList(body, out::add);
        } while (cursor != null);
        return out;
    }

    /** Bytes {@code [from, from + len)} of segment {@code name}, which must still have {@code checksum}. */
    public byte[] range(String name, long checksum, long from, int len) {
        String q = "getSegment?name=" + enc(name);
        String etag = "\"" + hex(checksum) + "\"";
        Answer a = get(q, "bytes=" + from + "-" + (from + len - 1), etag, len);
        if (a.status == 404 || a.status == 412 || (a.status == 206 && !etag.equals(a.etag))) {
            throw new StaleSegmentException(name + " is no longer " + hex(checksum) + " at the archive (" + a.status
                    + ", ETag " + a.etag + ")");
        }
        if (a.status != 206) {
            throw failure(q, a);
        }
        if (a.body.length != len) {
            throw failed(q, "answered " + a.body.length + " of " + len + " bytes");
        }
        return a.body;
    }

    /** The stored zstd frame of block {@code block} (exactly {@code len} bytes) of {@code name} at {@code checksum}. */
    public byte[] block(String name, long checksum, int block, int len) {
        String q = "getBlock?segment=" + enc(name) + "&blockIndex=" + block;
        String etag = "\"" + hex(checksum) + ":" + block + "\"";
        Answer a = get(q, null, null, len);
        if (a.status == 404 || (a.status == 200 && !etag.equals(a.etag))) {
            throw new StaleSegmentException(name + " block " + block + " is no longer " + hex(checksum)
                    + " at the archive (" + a.status + ", ETag " + a.etag + ")");
        }
        ok(a, q);
        if (a.body.length != len) {
            throw failed(q, "answered " + a.body.length + " of " + len + " bytes");
        }
        return a.body;
    }

    /**
     * planSnapshot's answer for the JSON {@code body} (docs/http-api.md: planSnapshot), or null when the archive (or a
     * CDN in front of it) answers anything but 200: a filter outside its limits, a method it does not pass on.
     * The caller then reads without a plan; only an archive that cannot be reached at all is a failure.
     */
    public byte[] plan(byte[] body) {
        String q = "planSnapshot";
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + NS + q)).timeout(deadline)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body));
        Answer a = send(b, q, PLAN_CAP, false);
        return a.status == 200 ? a.body : null;
    }

    private record Answer(int status, String etag, byte[] body) {}

    private byte[] ok(Answer a, String q) {
        if (a.status != 200) {
            throw failure(q, a);
        }
        return a.body;
    }

    private UncheckedIOException failure(String q, Answer a) {
        String msg = new String(a.body, 0, Math.min(a.body.length, 200), StandardCharsets.UTF_8);
        return failed(q, "HTTP " + a.status + " " + msg);
    }

    private UncheckedIOException failed(String q, String why) {
        String m = "archive " + base + NS + q + ": " + why;
        lastFailure = m;
        reachable = false;
        return new UncheckedIOException(new IOException(m));
    }

    /** One GET under the deadline; the body is capped at {@code cap} bytes (an error envelope at 64 KiB). */
    private Answer get(String q, String range, String ifMatch, int cap) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + NS + q)).timeout(deadline).GET();
        if (range != null) {
            b.header("Range", range);
        }
        if (ifMatch != null) {
            b.header("If-Match", ifMatch);
        }
        return send(b, q, cap, true);
    }

    /** {@code statusFails}: a 5xx or 429 answer is a failure (else it is returned like any other). */
    private Answer send(HttpRequest.Builder b, String q, int cap, boolean statusFails) {
        CompletableFuture<HttpResponse<byte[]>> f = http.sendAsync(b.build(),
                info -> new CappedBody(info.statusCode() / 100 == 2 ? cap : ERROR_CAP));
        HttpResponse<byte[]> r;
        try {
            r = f.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw failed(q, "no complete answer within " + deadline.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw failed(q, String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(q, "interrupted");
        }
        int status = r.statusCode();
        if (statusFails && (status / 100 == 5 || status == 429)) {
            throw failure(q, new Answer(status, null, r.body()));
        }
        reachable = true;
        return new Answer(status, r.headers().firstValue("ETag").orElse(null), r.body());
    }

    /** Parses one listSegments page into {@code sink}; returns the next cursor or null. */
    static String parseList(byte[] body, Consumer<Listed> sink) {
        String cursor = null;
        try (JsonParser p = JSON.createParser(body)) {
            expect(p.nextToken() == JsonToken.START_OBJECT);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.getCurrentName();
                JsonToken t = p.nextToken();
                if ("cursor".equals(field)) {
                    cursor = p.getText();
                } else if ("segments".equals(field)) {
                    expect(t == JsonToken.START_ARRAY);
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        sink.accept(item(p));
                    }
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new UncheckedIOException(new IOException("malformed listSegments answer: " + e.getMessage(), e));
        }
        return cursor;
    }

    private static Listed item(JsonParser p) throws IOException {
        String name = null;
        long checksum = 0;
        long[] v = new long[5];
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.getCurrentName();
            p.nextToken();
            switch (field) {
                case "name" -> name = p.getText();
                case "checksum" -> checksum = Long.parseUnsignedLong(p.getText(), 16);
                case "index" -> v[0] = p.getLongValue();
                case "minSeq" -> v[1] = p.getLongValue();
                case "maxSeq" -> v[2] = p.getLongValue();
                case "minWitnessedAt" -> v[3] = p.getLongValue();
                case "maxWitnessedAt" -> v[4] = p.getLongValue();
                default -> p.skipChildren();
            }
        }
        expect(name != null && checksum != 0);
        return new Listed(name, v[0], checksum, v[1], v[2], v[3], v[4]);
    }

    private static void expect(boolean ok) throws IOException {
        if (!ok) {
            throw new IOException("unexpected structure");
        }
    }

    static String hex(long checksum) {
        return String.format("%016x", checksum);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** Collects a body up to a byte cap; past it the exchange is cancelled and the answer fails. */
    private static final class CappedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final int cap;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private Flow.Subscription subscription;

        CappedBody(int cap) {
            this.cap = cap;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (result.isDone()) {
                return;
            }
            for (ByteBuffer b : items) {
                if ((long) out.size() + b.remaining() > cap) {
                    subscription.cancel();
                    result.completeExceptionally(new IOException("answer longer than its cap of " + cap + " bytes"));
                    return;
                }
                byte[] a = new byte[b.remaining()];
                b.get(a);
                out.write(a, 0, a.length);
            }
        }

        @Override
        public void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            result.complete(out.toByteArray());
        }

        @Override
        public java.util.concurrent.CompletionStage<byte[]> getBody() {
            return result;
        }
    }
}
