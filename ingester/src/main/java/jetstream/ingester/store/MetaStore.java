package jetstream.ingester.store;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Status;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The ingester's metadata store, {@code data/meta.rocksdb} (key space: docs/metadata-keys.md). Only the
 * ingester opens it. Every write is a synced batch; a failed read or write is fatal
 * ({@link MetaStoreException}, ENOSPC named). Thread-safe (RocksDB is). An operation after (or racing)
 * {@link #close} fails with {@link IllegalStateException} instead of reaching freed native memory: a
 * RocksDB call on a closed handle crashes the JVM with SIGSEGV.
 */
public final class MetaStore implements AutoCloseable {
    public static final String DIR_NAME = "meta.rocksdb";
    /** RocksDB block cache (data, index and filter blocks): 64 MiB. */
    public static final long BLOCK_CACHE_BYTES = 64L << 20;
    /** One memtable: 32 MiB; at most {@link #MAX_WRITE_BUFFERS} of them (96 MiB). */
    public static final long WRITE_BUFFER_BYTES = 32L << 20;
    public static final int MAX_WRITE_BUFFERS = 3;

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final Options options;
    private final LRUCache cache;
    private final RocksDB db;
    private final WriteOptions sync;
    private volatile OpObserver observer = OpObserver.NONE;
    /** Operations inside the native handle now; {@link #close} waits for them to leave. */
    private final java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closed;

    /** Timing of each store operation ({@code jetstream_store_op_duration_seconds{op,status}}, docs/metrics.md). */
    @FunctionalInterface
    public interface OpObserver {
        OpObserver NONE = (op, ok, nanos) -> {};

        void record(String op, boolean ok, long nanos);
    }

    private MetaStore(Path dir, Options options, LRUCache cache, RocksDB db) {
        this.dir = dir;
        this.options = options;
        this.cache = cache;
        this.db = db;
        this.sync = new WriteOptions().setSync(true);
    }

    /** Opens (creating) {@code <dataDir>/meta.rocksdb}. */
    public static MetaStore open(Path dataDir) {
        Path dir = dataDir.resolve(DIR_NAME);
        LRUCache cache = new LRUCache(BLOCK_CACHE_BYTES);
        // explicit sizes, so native memory does not grow with the key space: block cache + at most
        // MAX_WRITE_BUFFERS memtables (docs/configuration.md, "Memory")
        Options options = new Options().setCreateIfMissing(true)
                .setWriteBufferSize(WRITE_BUFFER_BYTES).setMaxWriteBufferNumber(MAX_WRITE_BUFFERS)
                .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(new BloomFilter(10))
                        .setBlockCache(cache).setCacheIndexAndFilterBlocks(true));
        try {
            Files.createDirectories(dataDir);
            return new MetaStore(dir, options, cache, RocksDB.open(options, dir.toString()));
        } catch (RocksDBException | java.io.IOException e) {
            options.close();
            cache.close();
            throw new MetaStoreException("opening", dir, e);
        }
    }

    public Path dir() {
        return dir;
    }

    /** Sets where operation timings go (get, scan, commit). */
    public void observe(OpObserver o) {
        observer = o == null ? OpObserver.NONE : o;
    }

    public byte[] get(String key) {
        enter();
        long t0 = System.nanoTime();
        try {
            byte[] v = db.get(key.getBytes(StandardCharsets.UTF_8));
            observer.record("get", true, System.nanoTime() - t0);
            return v;
        } catch (RocksDBException e) {
            observer.record("get", false, System.nanoTime() - t0);
            throw new MetaStoreException("reading " + key + " from", dir, e);
        } finally {
            inside.decrementAndGet();
        }
    }

    private void enter() {
        inside.incrementAndGet();
        if (closed) {
            inside.decrementAndGet();
            throw new IllegalStateException("metadata store " + dir + " is closed");
        }
    }

    /** Rows a scan reads per iterator: a pass over every {@code repo/} row holds at most this many at once. */
    public static final int SCAN_BATCH_ROWS = 4096;

    /**
     * Visits every key and value under {@code prefix} in key order, reading them in batches of
     * {@link #SCAN_BATCH_ROWS} (see {@link #page}). Memory stays bounded whatever the number of
     * rows: a network has tens of millions of {@code repo/} rows, which never fit in a list.
     */
    public void forEach(String prefix, java.util.function.BiConsumer<byte[], byte[]> visitor) {
        byte[] after = null;
        while (true) {
            List<byte[][]> rows = page(prefix, after, SCAN_BATCH_ROWS);
            for (byte[][] kv : rows) {
                visitor.accept(kv[0], kv[1]);
            }
            if (rows.size() < SCAN_BATCH_ROWS) {
                return;
            }
            after = rows.get(rows.size() - 1)[0];
        }
    }

    /**
     * At most {@code max} rows under {@code prefix} whose key sorts after {@code after} (null: from
     * the start of the prefix), in key order. The iterator is closed before this returns, so a
     * caller that works on a page for a long time (downloads) pins no RocksDB version, and rows it
     * rewrites behind its position are not visited again. Fewer than {@code max} rows: the end.
     */
    public List<byte[][]> page(String prefix, byte[] after, int max) {
        byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
        List<byte[][]> out = new ArrayList<>(Math.min(max, 1024));
        long t0 = System.nanoTime();
        enter();
        try (RocksIterator it = db.newIterator()) {
            if (after == null) {
                it.seek(p);
            } else {
                it.seek(after);
                if (it.isValid() && Arrays.equals(it.key(), after)) {
                    it.next();
                }
            }
            for (; it.isValid() && out.size() < max; it.next()) {
                byte[] k = it.key();
                if (k.length < p.length || !Arrays.equals(k, 0, p.length, p, 0, p.length)) {
                    break;
                }
                out.add(new byte[][] {k, it.value()});
            }
            it.status();
        } catch (RocksDBException e) {
            observer.record("scan", false, System.nanoTime() - t0);
            throw new MetaStoreException("scanning " + prefix + " in", dir, e);
        } finally {
            inside.decrementAndGet();
        }
        observer.record("scan", true, System.nanoTime() - t0);
        return out;
    }

    public Batch batch() {
        return new Batch();
    }

    /** One atomic, synced write. */
    public final class Batch implements AutoCloseable {
        private final WriteBatch wb = new WriteBatch();
        private int ops;

        public Batch put(String key, byte[] value) {
            return put(key.getBytes(StandardCharsets.UTF_8), value);
        }

        public Batch put(byte[] key, byte[] value) {
            try {
                wb.put(key, value);
            } catch (RocksDBException e) {
                throw new MetaStoreException("staging a write for", dir, e);
            }
            ops++;
            return this;
        }

        public Batch delete(String key) {
            try {
                wb.delete(key.getBytes(StandardCharsets.UTF_8));
            } catch (RocksDBException e) {
                throw new MetaStoreException("staging a delete for", dir, e);
            }
            ops++;
            return this;
        }

        public int size() {
            return ops;
        }

        /** Commits with fsync; fatal on failure. */
        public void commit() {
            enter();
            long t0 = System.nanoTime();
            try {
                db.write(sync, wb);
            } catch (RocksDBException e) {
                observer.record("commit", false, System.nanoTime() - t0);
                throw new MetaStoreException("committing a synced batch to", dir, e);
            } finally {
                inside.decrementAndGet();
            }
            observer.record("commit", true, System.nanoTime() - t0);
        }

        @Override
        public void close() {
            wb.close();
        }
    }

    /**
     * Closes the store once no operation is inside it. One still inside after 30 s (a stuck
     * fsync) leaves the native handles open: a leak at shutdown is better than a crash.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (inside.get() > 0) {
            if (System.nanoTime() > deadline) {
                return;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        try {
            db.syncWal();
        } catch (RocksDBException ignored) {
            // every batch was already committed with sync; nothing is left to flush
        }
        sync.close();
        db.close();
        options.close();
        cache.close();
    }

    /** A failed metadata read or write: fatal, with the ENOSPC operator message when the disk is full. */
    public static final class MetaStoreException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final boolean diskFull;

        MetaStoreException(String action, Path dir, Exception cause) {
            super(message(action, dir, cause), cause);
            this.diskFull = isDiskFull(cause);
        }

        public boolean diskFull() {
            return diskFull;
        }

        private static boolean isDiskFull(Exception e) {
            if (e instanceof RocksDBException r && r.getStatus() != null
                    && r.getStatus().getSubCode() == Status.SubCode.NoSpace) {
                return true;
            }
            String m = e.getMessage();
            return m != null && (m.contains("No space left on device") || m.contains("ENOSPC"));
        }

        private static String message(String action, Path dir, Exception cause) {
            if (isDiskFull(cause)) {
                return "fatal persistence error: disk full (ENOSPC) while " + action + " " + dir
                        + ": free space or move the data directory, then restart jetstream";
            }
            return "fatal persistence error while " + action + " " + dir + ": " + cause.getMessage();
        }
    }
}
