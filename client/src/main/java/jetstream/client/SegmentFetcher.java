package jetstream.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Downloads one whole segment (facts §11.4): a probe range request for the first part, then the
 * remaining parts in parallel stripes, each pinned to the probe's strong ETag with {@code If-Range}.
 * A part that comes back as anything but 206 with that ETag means the file was rewritten (e.g. by
 * compaction) since the probe: the whole download restarts, at most twice. A part cut short resumes
 * from its last received byte.
 */
final class SegmentFetcher {
    static final long MAX_SEGMENT_BYTES = 1L << 30;
    private static final int MAX_GENERATIONS = 3;
    static final String GET_SEGMENT = "network.bsky.jetstream.getSegment";

    private final Xrpc xrpc;
    private final ExecutorService stripePool;
    private final int stripes;
    private final int partBytes;
    private final AtomicLong bytes;

    SegmentFetcher(Xrpc xrpc, ExecutorService stripePool, int stripes, int partBytes, AtomicLong bytes) {
        this.xrpc = xrpc;
        this.stripePool = stripePool;
        this.stripes = stripes;
        this.partBytes = partBytes;
        this.bytes = bytes;
    }

    /** Thrown when a part answers from another generation of the file than the probe. */
    private static final class Rewritten extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Rewritten(String message) {
            super(message, null, false, false);
        }
    }

    byte[] fetch(String name) {
        URI u = xrpc.uri(GET_SEGMENT, "name=" + Xrpc.enc(name));
        String last = null;
        for (int gen = 0; gen < MAX_GENERATIONS; gen++) {
            try {
                return fetchGeneration(u, name);
            } catch (Rewritten r) {
                last = r.getMessage();
            }
        }
        throw new JetstreamException("segment " + name + " kept changing during download: " + last);
    }

    private record Probe(byte[] file, int have, String etag) {}

    private byte[] fetchGeneration(URI u, String name) {
        Probe probe = xrpc.withRetries("getSegment " + name, () -> probe(u));
        if (probe.etag == null) {
            return probe.file;
        }
        byte[] file = probe.file;
        List<long[]> parts = new ArrayList<>();
        for (long start = probe.have; start < file.length; start += partBytes) {
            parts.add(new long[] {start, Math.min(file.length, start + partBytes) - 1});
        }
        if (parts.isEmpty()) {
            return file;
        }
        if (stripes == 1) {
            for (long[] p : parts) {
                fetchPart(u, name, probe.etag, file, p[0], p[1]);
            }
            return file;
        }
        // Stripe-bounded: at most `stripes` parts of this segment in flight.
        List<Future<?>> inFlight = new ArrayList<>();
        int next = 0;
        try {
            while (next < parts.size() || !inFlight.isEmpty()) {
                while (next < parts.size() && inFlight.size() < stripes) {
                    long[] p = parts.get(next++);
                    inFlight.add(stripePool.submit(() -> fetchPart(u, name, probe.etag, file, p[0], p[1])));
                }
                inFlight.remove(0).get();
            }
        } catch (ExecutionException e) {
            inFlight.forEach(f -> f.cancel(true));
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new JetstreamException("getSegment " + name + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            inFlight.forEach(f -> f.cancel(true));
            Thread.currentThread().interrupt();
            throw new JetstreamException("interrupted", e);
        }
        return file;
    }

    private Probe probe(URI u) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = xrpc.http.send(xrpc.request(u, true)
                .header("Range", "bytes=0-" + (partBytes - 1)).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        int status = r.statusCode();
        if (status == 200) {
            byte[] all = xrpc.readAll(r);
            bytes.addAndGet(all.length);
            return new Probe(all, all.length, null);
        }
        if (status != 206) {
            throw Xrpc.failure(status, xrpc.drain(r), r);
        }
        long[] range = contentRange(r);
        if (range[0] != 0) {
            xrpc.drain(r);
            throw new JetstreamException("getSegment probe answered range starting at " + range[0]);
        }
        if (range[2] > MAX_SEGMENT_BYTES) {
            xrpc.drain(r);
            throw new JetstreamException("segment of " + range[2] + " bytes is above the 1 GiB limit");
        }
        String etag = r.headers().firstValue("ETag").filter(SegmentFetcher::strong).orElse(null);
        if (etag == null) {
            xrpc.drain(r);
            return xrpc.withRetries("getSegment", () -> full(u));
        }
        byte[] file = new byte[(int) range[2]];
        int end = (int) range[1];
        int got = 0;
        try (InputStream in = r.body()) {
            int n;
            while (got <= end && (n = xrpc.read(in, file, got, end + 1 - got)) >= 0) {
                got += n;
                bytes.addAndGet(n);
            }
        } catch (IOException e) {
            if (got == 0) {
                throw e;
            }
        }
        // A short probe body keeps what arrived; the parts loop resumes after it.
        return new Probe(file, got, etag);
    }

    private Probe full(URI u) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = xrpc.http.send(xrpc.request(u, true).GET().build(),
                HttpResponse.BodyHandlers.ofInputStream());
        byte[] body = xrpc.readAll(r);
        if (r.statusCode() != 200) {
            throw Xrpc.failure(r.statusCode(), body, r);
        }
        bytes.addAndGet(body.length);
        return new Probe(body, body.length, null);
    }

    private static boolean strong(String etag) {
        return etag.startsWith("\"") && etag.endsWith("\"") && etag.length() >= 2;
    }

    /** Fetches {@code [start, end]} into {@code file}, resuming after partial bodies. */
    private void fetchPart(URI u, String name, String etag, byte[] file, long start, long end) {
        long[] pos = {start};
        xrpc.withRetries("getSegment " + name + " bytes " + start + "-" + end, () -> {
            HttpResponse<InputStream> r = xrpc.http.send(xrpc.request(u, true)
                    .header("Range", "bytes=" + pos[0] + "-" + end).header("If-Range", etag).GET().build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            int status = r.statusCode();
            if (status == 200) {
                xrpc.drain(r);
                throw new Rewritten("range request answered 200 (file replaced)");
            }
            if (status != 206) {
                throw Xrpc.failure(status, xrpc.drain(r), r);
            }
            String got = r.headers().firstValue("ETag").orElse("");
            long[] range = contentRange(r);
            if (!got.equals(etag) || range[2] != file.length) {
                xrpc.drain(r);
                throw new Rewritten("ETag " + got + " / size " + range[2] + " differs from " + etag + " / " + file.length);
            }
            if (range[0] != pos[0] || range[1] != end) {
                xrpc.drain(r);
                throw new JetstreamException("getSegment answered range " + range[0] + "-" + range[1]
                        + " for " + pos[0] + "-" + end);
            }
            try (InputStream in = r.body()) {
                while (pos[0] <= end) {
                    int n = xrpc.read(in, file, (int) pos[0], (int) (end + 1 - pos[0]));
                    if (n < 0) {
                        throw new IOException("range body ended at " + pos[0] + " of " + end);
                    }
                    pos[0] += n;
                    bytes.addAndGet(n);
                }
            }
            return null;
        });
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
