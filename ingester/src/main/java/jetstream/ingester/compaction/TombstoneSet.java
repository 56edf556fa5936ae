package jetstream.ingester.compaction;

import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hashing;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.BlockView;
import jetstream.segment.Kind;

/**
 * The in-memory tombstones since the last pass (docs/lifecycle.md: Compaction): compaction-internal, it only feeds the
 * size gauges and the early-pass trigger at {@code --compaction-tombstone-cap}; a pass itself folds
 * tombstones from the rows on disk. Holds 64-bit hashes of the tombstone keys (record or DID) in an
 * open-addressing table, so a key seen twice (an append and the restart rebuild reading the same
 * row) counts once. Fed by the steady writer's append path and by the rebuild after a restart.
 */
public final class TombstoneSet implements SteadyWriter.AppendObserver {
    private static final int INITIAL = 1 << 10;

    private final HashStream64 hash = Hashing.xxh3_64().hashStream();
    private long[] table = new long[INITIAL];
    private int size;

    @Override
    public void appended(long seq, int kind, byte[] did, byte[] collection, byte[] rkey, ByteSlice payload) {
        if (kind == Kind.UPDATE.code() || kind == Kind.DELETE.code()) {
            addRecord(did, 0, did.length, collection, 0, collection.length, rkey, 0, rkey.length);
        } else if (kind == Kind.SYNC.code() || kind == Kind.ACCOUNT.code()
                && Tombstones.accountDeleted(payload.buffer(), payload.offset(), payload.length())) {
            addDid(did, 0, did.length);
        }
    }

    /** The same classification for a row read back from a segment (restart rebuild). */
    public void observe(BlockView v, int r) {
        int kind = v.kindCode(r);
        byte[] b = v.buffer();
        if (kind == Kind.UPDATE.code() || kind == Kind.DELETE.code()) {
            addRecord(b, v.didOffset(r), v.didLength(r), b, v.collectionOffset(r), v.collectionLength(r),
                    b, v.rkeyOffset(r), v.rkeyLength(r));
        } else if (kind == Kind.SYNC.code() || kind == Kind.ACCOUNT.code()
                && Tombstones.accountDeleted(b, v.payloadOffset(r), v.payloadLength(r))) {
            addDid(b, v.didOffset(r), v.didLength(r));
        }
    }

    private synchronized void addRecord(byte[] did, int dOff, int dLen, byte[] coll, int cOff, int cLen,
                                        byte[] rkey, int rOff, int rLen) {
        hash.reset().putByte((byte) 1).putBytes(did, dOff, dLen).putByte((byte) 0).putBytes(coll, cOff, cLen)
                .putByte((byte) 0).putBytes(rkey, rOff, rLen);
        add(hash.getAsLong());
    }

    private synchronized void addDid(byte[] did, int off, int len) {
        hash.reset().putByte((byte) 2).putBytes(did, off, len);
        add(hash.getAsLong());
    }

    private void add(long h) {
        long key = h == 0 ? 1 : h; // 0 marks an empty slot
        int mask = table.length - 1;
        int i = (int) (key ^ (key >>> 32)) & mask;
        while (table[i] != 0) {
            if (table[i] == key) {
                return;
            }
            i = (i + 1) & mask;
        }
        table[i] = key;
        if (++size * 4L > table.length * 3L) {
            grow();
        }
    }

    private void grow() {
        long[] old = table;
        table = new long[old.length * 2];
        int mask = table.length - 1;
        for (long key : old) {
            if (key != 0) {
                int i = (int) (key ^ (key >>> 32)) & mask;
                while (table[i] != 0) {
                    i = (i + 1) & mask;
                }
                table[i] = key;
            }
        }
    }

    /** Distinct tombstone keys ({@code jetstream_compaction_tombstone_set_entries}). */
    public synchronized int size() {
        return size;
    }

    /** Heap held by the table ({@code jetstream_compaction_tombstone_set_bytes}). */
    public synchronized long bytes() {
        return table.length * 8L;
    }

    /** Forgets everything (a pass is starting: it folds what the set counted from disk). */
    public synchronized void clear() {
        table = new long[INITIAL];
        size = 0;
    }
}
