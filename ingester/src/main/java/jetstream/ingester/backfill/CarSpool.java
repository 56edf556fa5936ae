package jetstream.ingester.backfill;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import jetstream.ingester.writer.ByteBudget;

/**
 * Where downloaded repository CARs live while they are parsed. A CAR is read into heap only while
 * the fleet-wide in-flight budget ({@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES}) has room and the
 * CAR stays under the spool threshold ({@code JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES}); anything
 * else streams to a file under {@code <data>/backfill-spool/}, is parsed from there and deleted.
 * A download never waits for budget (so downloads cannot deadlock on each other's partial
 * bodies): when heap is short, disk takes the overflow. A CAR read into heap holds what parsing it
 * takes ({@link #heapCost}), not only its own bytes.
 */
final class CarSpool {
    private static final int CHUNK = 64 << 10;

    /**
     * Heap a CAR parsed in heap takes at its peak, per CAR byte, as a fraction {@code /2}: the CAR, its block
     * index, the walked records and the rows aliasing it. Measured 2.51× on a 38 MB repository of 109,201
     * records (the rows and the CAR they alias alone 2.23×); charged for the CAR's bytes alone, fourteen such
     * downloads fit a 512 MiB budget and ran a 1 GiB heap out of memory.
     */
    private static final long HEAP_HALVES_PER_BYTE = 5;

    /** What a CAR of {@code carBytes} parsed in heap holds from the in-flight budget. */
    static long heapCost(long carBytes) {
        return carBytes * HEAP_HALVES_PER_BYTE / 2;
    }

    private final ByteBudget budget;
    private final long threshold;
    private final Path dir;
    private final io.micrometer.core.instrument.Counter spooled;

    /**
     * Creates {@code dir}, deleting CARs a crashed run left there; {@code budget} is the in-flight
     * budget, shared by every spool of the ingester; {@code spooled} counts spooled CARs.
     */
    CarSpool(ByteBudget budget, long thresholdBytes, Path dir, io.micrometer.core.instrument.Counter spooled) {
        this.spooled = spooled;
        this.budget = budget;
        this.threshold = thresholdBytes;
        this.dir = dir;
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> left = Files.newDirectoryStream(dir, "*.car")) {
                for (Path p : left) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("preparing the CAR spool directory " + dir, e);
        }
    }

    /** Bytes of CAR bodies held in heap now by every user of the budget (downloads in flight and rows not yet queued). */
    long inflightBytes() {
        return budget.held();
    }

    /**
     * The body: a {@code byte[]} whose {@link #heapCost} is now held from the budget (give it back with
     * {@link #release}), or the {@link Path} of a spooled file; null when it exceeds {@code max}.
     */
    Object read(InputStream in, long declared, long max) throws IOException {
        if (declared > max) {
            return null;
        }
        if (declared >= 0) {
            if (declared > threshold || !tryAcquire(heapCost(declared))) {
                return spool(null, 0, in, declared, max);
            }
            boolean kept = false;
            try {
                // into one array of the declared size: readNBytes(int) gathers 8 KiB pieces and copies them again
                byte[] b = new byte[(int) declared];
                if (in.readNBytes(b, 0, b.length) != declared) {
                    throw new IOException("body shorter than its content-length");
                }
                // read to the end of the stream: a body closed before its end cancels the exchange,
                // and the HTTP client then drops the connection instead of keeping it for the next repo
                if (in.read() >= 0) {
                    throw new IOException("body longer than its content-length");
                }
                kept = true;
                return b;
            } finally {
                if (!kept) {
                    budget.release(heapCost(declared));
                }
            }
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[CHUNK];
        long read = 0;
        long held = 0;
        boolean kept = false;
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                // the cost of the whole so far, so what is held ends at heapCost(length) exactly
                long more = heapCost(read + n) - held;
                if (read + n > threshold || !tryAcquire(more)) {
                    out.write(buf, 0, n);
                    byte[] head = out.toByteArray();
                    budget.release(held);
                    held = 0;
                    return spool(head, head.length, in, -1, max);
                }
                read += n;
                held += more;
                out.write(buf, 0, n);
            }
            kept = true;
            return out.toByteArray();
        } finally {
            if (!kept) {
                budget.release(held);
            }
        }
    }

    private boolean tryAcquire(long bytes) throws IOException {
        try {
            return budget.tryAcquire(bytes, 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while reading a CAR");
        }
    }

    /** Streams {@code head} then the rest of {@code in} to a new spool file; null (file deleted) beyond {@code max}. */
    private Path spool(byte[] head, int headLen, InputStream in, long declared, long max) throws IOException {
        Path f = Files.createTempFile(dir, "repo-", ".car");
        boolean ok = false;
        try (OutputStream out = Files.newOutputStream(f)) {
            long total = headLen;
            if (head != null) {
                out.write(head, 0, headLen);
            }
            byte[] buf = new byte[CHUNK];
            for (int n; (n = in.read(buf)) > 0; ) {
                total += n;
                if (total > max) {
                    return null;
                }
                out.write(buf, 0, n);
            }
            if (declared >= 0 && total != declared) {
                throw new IOException("body shorter than its content-length");
            }
            ok = true;
            spooled.increment();
            return f;
        } finally {
            if (!ok) {
                Files.deleteIfExists(f);
            }
        }
    }

    /** Takes {@code bytes} from the budget, waiting for room (not while a body is being read). */
    void hold(long bytes) throws InterruptedException {
        budget.acquire(bytes);
    }

    void release(long bytes) {
        if (bytes > 0) {
            budget.release(bytes);
        }
    }

    static void delete(Path spooled) {
        try {
            Files.deleteIfExists(spooled);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("deleting the spooled CAR " + spooled, e);
        }
    }
}
