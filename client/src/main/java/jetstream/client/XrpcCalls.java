package jetstream.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The XRPC calls of the client over {@link HttpClient}, with retries: 5xx, 429 and network errors
 * are retried with doubling backoff (a {@code Retry-After} is honoured up to 30 s) until the
 * attempt cap; other statuses fail at once with the server's error envelope.
 */
final class XrpcCalls {
    static final JsonFactory JSON = new JsonFactory();
    private static final long MAX_RETRY_AFTER_MS = 30_000;
    private static final long MAX_BACKOFF_MS = 5_000;

    final HttpClient http;
    final URI base;
    private final String apiKey;
    private final int maxAttempts;
    private final long retryBaseMs;
    final AtomicLong retries = new AtomicLong();
    private final long stallMs;
    /** Closes a response stream that stops delivering: the JDK client may wait forever on a half-closed body. */
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor w = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "jetstream-stall-watchdog");
            t.setDaemon(true);
            return t;
        });
        // Every read schedules and cancels one task; cancelled ones must not pile up until their deadline.
        w.setRemoveOnCancelPolicy(true);
        return w;
    }

    XrpcCalls(HttpClient http, URI base, String apiKey, int maxAttempts, Duration retryBase, Duration stall) {
        this.http = http;
        this.base = base;
        this.apiKey = apiKey;
        this.maxAttempts = maxAttempts;
        this.retryBaseMs = Math.max(1, retryBase.toMillis());
        this.stallMs = Math.max(1, stall.toMillis());
    }

    /** One read that fails (the stream is closed) when no byte arrives within the stall timeout. */
    int read(InputStream in, byte[] b, int off, int len) throws IOException {
        ScheduledFuture<?> guard = WATCHDOG.schedule(() -> {
            try {
                in.close();
            } catch (IOException ignored) {
                // Closing is only a way to wake the blocked reader.
            }
        }, stallMs, TimeUnit.MILLISECONDS);
        try {
            return in.read(b, off, len);
        } finally {
            guard.cancel(false);
        }
    }

    /** Reads a whole response body under the stall guard; a body shorter than Content-Length fails. */
    byte[] readAll(HttpResponse<InputStream> r) throws IOException {
        long declared = r.headers().firstValueAsLong("Content-Length").orElse(-1);
        try (InputStream in = r.body()) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(declared > 0 ? (int) declared : 8192);
            byte[] buf = new byte[16384];
            int n;
            while ((n = read(in, buf, 0, buf.length)) >= 0) {
                out.write(buf, 0, n);
            }
            if (declared >= 0 && out.size() != declared) {
                throw new IOException("body of " + out.size() + " bytes, Content-Length " + declared);
            }
            return out.toByteArray();
        }
    }

    /**
     * Normalizes a host the way the Go client does: no scheme means {@code https://} ({@code http://}
     * for loopback hosts); {@code ws}/{@code wss} map to {@code http}/{@code https}; any other scheme
     * is rejected.
     */
    static URI normalizeHost(String host) {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host must not be empty");
        }
        String h = host.strip();
        while (h.endsWith("/")) {
            h = h.substring(0, h.length() - 1);
        }
        int sep = h.indexOf("://");
        String scheme;
        String rest;
        if (sep < 0) {
            rest = h;
            String name = rest.startsWith("[") ? rest.substring(0, rest.indexOf(']') + 1) : rest.split("[:/]", 2)[0];
            scheme = isLoopback(name) ? "http" : "https";
        } else {
            scheme = switch (h.substring(0, sep).toLowerCase(java.util.Locale.ROOT)) {
                case "http", "ws" -> "http";
                case "https", "wss" -> "https";
                default -> throw new IllegalArgumentException("unsupported scheme in host " + host
                        + " (use http, https, ws or wss)");
            };
            rest = h.substring(sep + 3);
        }
        URI u;
        try {
            u = URI.create(scheme + "://" + rest);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad host " + host + ": " + e.getMessage());
        }
        if (u.getHost() == null) {
            throw new IllegalArgumentException("bad host " + host);
        }
        return u;
    }

    private static boolean isLoopback(String name) {
        return name.equals("localhost") || name.startsWith("127.") || name.equals("[::1]");
    }

    URI uri(String nsid, String query) {
        return base.resolve((base.getPath() == null ? "" : base.getPath()) + "/xrpc/" + nsid
                + (query == null || query.isEmpty() ? "" : "?" + query));
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    HttpRequest.Builder request(URI uri, boolean authed) {
        // No answer (status line and headers) within the stall timeout counts as a stalled request too.
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofMillis(stallMs));
        if (authed && apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return b;
    }

    /** A request that is retried; {@code body} maps a successful (2xx) response. */
    interface Call<T> {
        T attempt() throws IOException, InterruptedException;
    }

    /** Signals a retryable outcome from inside a {@link Call}. */
    static final class Retryable extends IOException {
        private static final long serialVersionUID = 1L;
        final long retryAfterMs;

        Retryable(String message, long retryAfterMs) {
            super(message);
            this.retryAfterMs = retryAfterMs;
        }
    }

    <T> T withRetries(String what, Call<T> call) {
        long delay = retryBaseMs;
        for (int attempt = 1; ; attempt++) {
            try {
                return call.attempt();
            } catch (XrpcException e) {
                throw e;
            } catch (IOException e) {
                if (attempt >= maxAttempts) {
                    throw new JetstreamException(what + " failed after " + attempt + " attempts: " + e.getMessage(), e);
                }
                long wait = delay;
                if (e instanceof Retryable r && r.retryAfterMs >= 0) {
                    wait = Math.min(r.retryAfterMs, MAX_RETRY_AFTER_MS);
                }
                retries.incrementAndGet();
                sleep(wait);
                delay = Math.min(delay * 2, MAX_BACKOFF_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new JetstreamException(what + " interrupted", e);
            }
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JetstreamException("interrupted", e);
        }
    }

    /**
     * Turns a non-success response into the right exception: {@link Retryable} for 5xx/429, else an
     * {@link XrpcException} carrying the envelope.
     */
    static IOException failure(int status, byte[] body, HttpResponse<?> resp) throws XrpcException {
        if (status >= 500 || status == 429) {
            long ra = resp.headers().firstValue("Retry-After").map(XrpcCalls::retryAfter).orElse(-1L);
            return new Retryable("HTTP " + status + " " + describe(status, body), ra);
        }
        throw envelope(status, body);
    }

    private static long retryAfter(String v) {
        try {
            return Long.parseLong(v.trim()) * 1000;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static XrpcException envelope(int status, byte[] body) {
        String error = null;
        String message = null;
        if (body != null && body.length > 0) {
            try (JsonParser p = JSON.createParser(body)) {
                if (p.nextToken() == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String k = p.currentName();
                        JsonToken t = p.nextToken();
                        if (t == JsonToken.VALUE_STRING && k.equals("error")) {
                            error = p.getText();
                        } else if (t == JsonToken.VALUE_STRING && k.equals("message")) {
                            message = p.getText();
                        } else {
                            p.skipChildren();
                        }
                    }
                }
            } catch (IOException e) {
                error = null;
            }
        }
        if (error == null) {
            String text = body == null ? "" : new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8).strip();
            return new XrpcException(status, "HTTP" + status, text);
        }
        return new XrpcException(status, error, message);
    }

    private static String describe(int status, byte[] body) {
        XrpcException e = envelope(status, body);
        return e.error() + (e.xrpcMessage().isEmpty() ? "" : ": " + e.xrpcMessage());
    }

    /** GET returning the whole body; {@code authed} adds the API key. */
    byte[] get(String nsid, String query, boolean authed) {
        URI u = uri(nsid, query);
        return withRetries(nsid, () -> {
            HttpResponse<InputStream> r = http.send(request(u, authed).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
            byte[] body = readAll(r);
            if (r.statusCode() / 100 != 2) {
                throw failure(r.statusCode(), body, r);
            }
            return body;
        });
    }

    byte[] post(String nsid, byte[] json) {
        URI u = uri(nsid, null);
        return withRetries(nsid, () -> {
            HttpResponse<InputStream> r = http.send(request(u, true).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(json)).build(), HttpResponse.BodyHandlers.ofInputStream());
            byte[] body = readAll(r);
            if (r.statusCode() / 100 != 2) {
                throw failure(r.statusCode(), body, r);
            }
            return body;
        });
    }

    /** Reads (bounded) and closes the body of a response that is not used. */
    byte[] drain(HttpResponse<InputStream> r) {
        try (InputStream in = r.body()) {
            byte[] buf = new byte[64 << 10];
            int have = 0;
            int n;
            while (have < buf.length && (n = read(in, buf, have, buf.length - have)) >= 0) {
                have += n;
            }
            return java.util.Arrays.copyOf(buf, have);
        } catch (IOException e) {
            return new byte[0];
        }
    }

    static Optional<String> header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name);
    }
}
