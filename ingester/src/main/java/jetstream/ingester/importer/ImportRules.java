package jetstream.ingester.importer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.GloomFilter;
import jetstream.segment.Kind;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The durable imported-timestamp rule map, {@code <data-dir>/import-rules/} (its own RocksDB,
 * docs/segment-format.md: Names, directories, sizes): URI → {@link ImportRule}, last write wins across every import. The steady writer asks it
 * for every appended row ({@link SteadyWriter.IndexedAtRules}), so rows appended after a job
 * installed its rules carry the imported time from the start. An in-memory DID bloom keeps that
 * lookup off RocksDB for the rows of DIDs no rule names.
 */
public final class ImportRules implements SteadyWriter.IndexedAtRules, AutoCloseable {
    public static final String DIR_NAME = "import-rules";
    private static final int BATCH = 8192;

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final Options options;
    private final RocksDB db;
    private final WriteOptions sync = new WriteOptions().setSync(true);
    /** DIDs with at least one rule; null while the map is empty. */
    private volatile GloomFilter dids;

    private ImportRules(Path dir, Options options, RocksDB db) {
        this.dir = dir;
        this.options = options;
        this.db = db;
    }

    public static ImportRules open(Path dataDir) {
        Path dir = dataDir.resolve(DIR_NAME);
        Options options = new Options().setCreateIfMissing(true)
                .setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(new BloomFilter(10)));
        try {
            Files.createDirectories(dir);
            ImportRules r = new ImportRules(dir, options, RocksDB.open(options, dir.toString()));
            r.reloadFilter();
            return r;
        } catch (RocksDBException | java.io.IOException e) {
            options.close();
            throw new RuleStoreException("opening", dir, e);
        }
    }

    /** Rebuilds the DID bloom from the stored keys, sized for them (after a job added rules). */
    public void reloadFilter() {
        long distinct = 0;
        try (RocksIterator it = db.newIterator()) {
            byte[] last = null;
            for (it.seekToFirst(); it.isValid(); it.next()) {
                byte[] did = didOf(it.key());
                if (last == null || !java.util.Arrays.equals(did, last)) {
                    distinct++;
                    last = did;
                }
            }
        }
        if (distinct == 0) {
            dids = null;
            return;
        }
        GloomFilter f = GloomFilter.create(distinct, 0.001);
        try (RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                f.add(didOf(it.key()));
            }
        }
        dids = f;
    }

    private static byte[] didOf(byte[] key) {
        int nul = 0;
        while (nul < key.length && key[nul] != 0) {
            nul++;
        }
        return java.util.Arrays.copyOf(key, nul);
    }

    @Override
    public long indexedAt(ArchiveRow row) {
        GloomFilter f = dids;
        if (f == null || !Kind.isValid(row.kind()) || !Kind.of(row.kind()).isMaterialization()) {
            return 0;
        }
        byte[] did = row.did().getBytes(StandardCharsets.UTF_8);
        if (!f.mightContain(did)) {
            return 0;
        }
        ImportRule rule = get(ImportRule.key(row.did(), row.collection(), row.rkey()));
        if (rule == null) {
            return 0;
        }
        ByteSlice p = row.payload();
        ImportRule.Match m = rule.match(row.kind(), p.buffer(), p.offset(), p.length());
        return rule.timestamp(m, p.buffer(), p.offset(), p.length());
    }

    private ImportRule get(byte[] key) {
        try {
            byte[] v = db.get(key);
            return v == null ? null : ImportRule.decode(v);
        } catch (RocksDBException e) {
            throw new RuleStoreException("reading", dir, e);
        }
    }

    /** Folds CSV rows into the store in batches; {@link #flush} makes them durable. */
    public final class Writer {
        private final Map<String, ImportRule> pending = new LinkedHashMap<>();

        public void add(ImportCsv.Row row) {
            String k = row.did() + '\0' + row.collection() + '\0' + row.rkey();
            ImportRule r = pending.get(k);
            if (r == null) {
                r = get(k.getBytes(StandardCharsets.UTF_8));
                if (r == null) {
                    r = new ImportRule();
                }
                pending.put(k, r);
            }
            r.add(row);
            if (pending.size() >= BATCH) {
                flush();
            }
        }

        /** One synced batch with every pending rule. */
        public void flush() {
            if (pending.isEmpty()) {
                return;
            }
            try (WriteBatch b = new WriteBatch()) {
                for (Map.Entry<String, ImportRule> e : pending.entrySet()) {
                    b.put(e.getKey().getBytes(StandardCharsets.UTF_8), e.getValue().encode());
                }
                db.write(sync, b);
            } catch (RocksDBException e) {
                throw new RuleStoreException("writing", dir, e);
            }
            pending.clear();
        }
    }

    /** A failed read or write of the rule store: our own persistence failure, fatal like the metadata store's. */
    public static final class RuleStoreException extends RuntimeException {
        RuleStoreException(String op, Path dir, Exception cause) {
            super("fatal persistence error: " + op + " the import rule store " + dir
                    + (isDiskFull(cause) ? " failed: disk full; free space or move the data directory, then restart jetstream"
                    : " failed: " + cause.getMessage()), cause);
        }

        private static boolean isDiskFull(Exception e) {
            return e instanceof RocksDBException r && r.getStatus() != null
                    && r.getStatus().getCode() == org.rocksdb.Status.Code.IOError
                    && String.valueOf(r.getMessage()).contains("No space left");
        }
    }

    public Writer writer() {
        return new Writer();
    }

    @Override
    public void close() {
        db.close();
        sync.close();
        options.close();
    }
}
