package jetstream.ingester.net;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One outbound GET whose whole exchange (connect, headers and body) has a deadline and whose body
 * has a byte cap. {@link HttpRequest#timeout} only covers the wait for the headers, so a peer that
 * trickles its body would hold the caller forever; here the body is collected by a subscriber that
 * cancels past the cap, and the caller waits at most the deadline for all of it. The client must not
 * follow redirects itself: callers check every hop ({@link #location}).
 */
public final class BoundedGet {
    private BoundedGet() {}

    /** An answer: status, headers and body, or a failure ({@code status} -1) named by {@code error}. */
    public record Response(int status, HttpHeaders headers, byte[] body, String error) {
        public boolean failed() {
            return status < 0;
        }
    }

    /** Failure names: the deadline passed, the body passed its cap, the peer could not be reached or broke off. */
    public static final String DEADLINE = "deadline";
    public static final String TOO_LARGE = "body_too_large";
    public static final String IO = "io";

    public static Response get(HttpClient http, URI uri, Duration deadline, long maxBytes) throws InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(deadline).GET().build();
        CompletableFuture<HttpResponse<byte[]>> f = http.sendAsync(req, info -> new Capped(info.headers(), maxBytes));
        try {
            HttpResponse<byte[]> r = f.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
            return new Response(r.statusCode(), r.headers(), r.body(), null);
        } catch (TimeoutException e) {
            f.cancel(true);
            return new Response(-1, null, null, DEADLINE);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            while (c != null && !(c instanceof TooLarge) && c.getCause() != null && c.getCause() != c) {
                c = c.getCause();
            }
            return new Response(-1, null, null, c instanceof TooLarge ? TOO_LARGE : IO);
        } catch (InterruptedException e) {
            f.cancel(true);
            throw e;
        }
    }

    /** The target of a 3xx answer resolved against {@code from}, or null when it is not a redirect (or has no usable location). */
    public static URI location(URI from, Response r) {
        if (r.failed() || r.status() < 300 || r.status() > 308 || r.status() == 304 || r.status() == 305 || r.status() == 306) {
            return null;
        }
        try {
            return r.headers().firstValue("location").map(from::resolve).orElse(null);
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

    private static final class TooLarge extends IOException {
        TooLarge() {
            super("body exceeds its cap", null);
        }
    }

    /** Collects the body up to {@code max} bytes; a declared or actual length beyond it fails the exchange. */
    private static final class Capped implements HttpResponse.BodySubscriber<byte[]> {
        private final CompletableFuture<byte[]> body = new CompletableFuture<>();
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final long max;
        private final long declared;
        private Flow.Subscription subscription;
        private long total;

        Capped(HttpHeaders headers, long max) {
            this.max = max;
            this.declared = headers.firstValueAsLong("content-length").orElse(-1);
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return body;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            if (declared > max) {
                s.cancel();
                body.completeExceptionally(new TooLarge());
                return;
            }
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (body.isDone()) {
                return;
            }
            for (ByteBuffer b : items) {
                total += b.remaining();
                if (total > max) {
                    subscription.cancel();
                    body.completeExceptionally(new TooLarge());
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                out.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable t) {
            body.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            body.complete(out.toByteArray());
        }
    }
}
