package jetstream.ingester.net;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import jetstream.ingester.backfill.HostnamePolicy;

/**
 * The one way the ingester makes an outbound request (listHosts, listRepos, getRepo, PLC,
 * did:web, resyncs): a GET whose whole exchange (connect, headers and every byte of the body) has
 * a deadline, and whose body has a byte cap. {@link HttpRequest#timeout} only covers the wait for
 * the headers, so a peer that trickles its body would otherwise hold the caller forever.
 *
 * <p>The body is a stream ({@link Response#body}): the transport holds at most one chunk of it at a
 * time (flow control asks the peer for the next chunk only once the reader took this one), so a
 * caller can parse or spool a large CAR without buffering it whole. Reading past the deadline or
 * the cap throws {@link Failure}. The client never follows redirects itself: callers check every
 * hop ({@link #location}, {@link #schemeAllowed}, {@link #publicHost}).
 */
public final class Outbound {
    private Outbound() {}

    /** Failure names: the deadline passed, the body passed its cap, the peer could not be reached or broke off. */
    public static final String DEADLINE = "deadline";
    public static final String TOO_LARGE = "body_too_large";
    public static final String IO = "io";

    /** Default cap on one repository CAR (getRepo, backfill and live resyncs alike): {@code JETSTREAM_MAX_CAR_BYTES}. */
    public static final long DEFAULT_MAX_CAR_BYTES = 512L << 20;

    /** A named outbound failure. */
    public static final class Failure extends IOException {
        private final String reason;

        Failure(String reason, Throwable cause) {
            super(reason, cause);
            this.reason = reason;
        }

        public String reason() {
            return reason;
        }
    }

    /** An answer whose body streams; close it when done (it cancels the rest of the body). */
    public record Response(int status, HttpHeaders headers, InputStream body) implements AutoCloseable {
        /** The whole body (bounded by the request's cap and deadline). */
        public byte[] readAll() throws IOException {
            return body.readAllBytes();
        }

        @Override
        public void close() throws IOException {
            body.close();
        }
    }

    /** How a GET is sent: {@link #open} on a client, or {@link PinnedHttp#open} to a checked address. */
    @FunctionalInterface
    public interface Transport {
        Response open(URI uri, Duration deadline, long maxBytes) throws IOException, InterruptedException;
    }

    /** A buffered answer: status, headers and body, or a failure ({@code status} -1) named by {@code error}. */
    public record Buffered(int status, HttpHeaders headers, byte[] body, String error) {
        public boolean failed() {
            return status < 0;
        }
    }

    /**
     * Sends the GET and waits for its headers (within the deadline); the body is read from the
     * response as it arrives, under the same deadline and the cap.
     */
    public static Response open(HttpClient http, URI uri, Duration deadline, long maxBytes)
            throws IOException, InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(deadline).GET().build();
        CompletableFuture<HttpResponse<InputStream>> f = http.sendAsync(req, info -> new Body(info.headers(), maxBytes, end));
        try {
            HttpResponse<InputStream> r = f.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
            if (r.headers().firstValueAsLong("content-length").orElse(-1) > maxBytes) {
                r.body().close();
                throw new Failure(TOO_LARGE, null);
            }
            return new Response(r.statusCode(), r.headers(), r.body());
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new Failure(DEADLINE, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof Failure failure) {
                throw failure;
            }
            throw c instanceof IOException io ? io : new Failure(IO, c);
        } catch (InterruptedException e) {
            f.cancel(true);
            throw e;
        }
    }

    /** {@link #open} with the body read whole; failures are returned, not thrown. */
    public static Buffered get(HttpClient http, URI uri, Duration deadline, long maxBytes) throws InterruptedException {
        try (Response r = open(http, uri, deadline, maxBytes)) {
            return new Buffered(r.status(), r.headers(), r.readAll(), null);
        } catch (Failure e) {
            return new Buffered(-1, null, null, e.reason());
        } catch (IOException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException();
            }
            return new Buffered(-1, null, null, IO);
        }
    }

    /** The target of a 3xx answer resolved against {@code from}, or null when it is not a redirect (or has no usable location). */
    public static URI location(URI from, int status, HttpHeaders headers) {
        if (status < 300 || status > 308 || status == 304 || status == 305 || status == 306) {
            return null;
        }
        try {
            return headers.firstValue("location").map(from::resolve).orElse(null);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether a redirect hop may be followed: http(s) only, never from https down to plain http. */
    public static boolean schemeAllowed(URI from, URI to) {
        String s = to.getScheme();
        if ("https".equalsIgnoreCase(s)) {
            return true;
        }
        return "http".equalsIgnoreCase(s) && !"https".equalsIgnoreCase(from.getScheme());
    }

    /**
     * Whether {@code host} may be dialled on an untrusted party's word (a DID document, a redirect):
     * it passes the hostname policy and every address it resolves to is public (loopback only with
     * the policy's development flag). A name that does not resolve now passes: the request then
     * fails to connect and is retried like any unreachable peer.
     */
    public static boolean publicHost(HostnamePolicy policy, String host) {
        HostnamePolicy.Verdict v = policy.check(host);
        if (!v.accepted()) {
            return false;
        }
        try {
            return policy.checkAddresses(InetAddress.getAllByName(v.hostname())) == null;
        } catch (UnknownHostException e) {
            return true;
        }
    }

    /**
     * A body subscriber exposed as an InputStream: one chunk list in hand at a time, a cap on the
     * total (declared or actual) and the exchange's deadline on every read.
     */
    private static final class Body extends BlockReadInput implements HttpResponse.BodySubscriber<InputStream> {
        private static final Object END = new Object();
        private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        private final long max;
        private final long declared;
        private final long end;
        private volatile Flow.Subscription subscription;
        private List<ByteBuffer> chunk = List.of();
        private int index;
        private long total;
        private boolean done;

        Body(HttpHeaders headers, long max, long end) {
            this.max = max;
            this.declared = headers.firstValueAsLong("content-length").orElse(-1);
            this.end = end;
        }

        @Override
        public CompletionStage<InputStream> getBody() {
            return CompletableFuture.completedFuture(this);
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(1);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            queue.add(items);
        }

        @Override
        public void onError(Throwable t) {
            queue.add(t);
        }

        @Override
        public void onComplete() {
            queue.add(END);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            ByteBuffer current = current();
            if (current == null) {
                return -1;
            }
            int n = Math.min(len, current.remaining());
            current.get(b, off, n);
            return n;
        }

        /** The buffer to read from, waiting (within the deadline) for the next chunk; null at the end. */
        private ByteBuffer current() throws IOException {
            if (declared > max) {
                throw fail(TOO_LARGE, null);
            }
            while (true) {
                if (done) {
                    return null;
                }
                while (index < chunk.size()) {
                    ByteBuffer b = chunk.get(index);
                    if (b.hasRemaining()) {
                        return b;
                    }
                    index++;
                }
                Object next;
                try {
                    long left = end - System.nanoTime();
                    next = left <= 0 ? null : queue.poll(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw fail(IO, e);
                }
                if (next == null) {
                    throw fail(DEADLINE, null);
                }
                if (next == END) {
                    done = true;
                    return null;
                }
                if (next instanceof Throwable t) {
                    throw fail(IO, t);
                }
                @SuppressWarnings("unchecked")
                List<ByteBuffer> items = (List<ByteBuffer>) next;
                for (ByteBuffer b : items) {
                    total += b.remaining();
                }
                if (total > max) {
                    throw fail(TOO_LARGE, null);
                }
                chunk = items;
                index = 0;
                subscription.request(1);
            }
        }

        private Failure fail(String reason, Throwable cause) {
            close();
            return new Failure(reason, cause);
        }

        @Override
        public void close() {
            if (!done) {
                done = true;
                Flow.Subscription s = subscription;
                if (s != null) {
                    s.cancel();
                }
            }
        }
    }
}
