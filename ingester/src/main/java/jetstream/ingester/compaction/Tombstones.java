package jetstream.ingester.compaction;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.segment.BlockView;
import jetstream.segment.Kind;

/**
 * The tombstones one pass folds from the rows in {@code (compaction/seq, target]} and the drop rule
 * of docs/lifecycle.md: Compaction. Record tombstones come from update and delete rows, {@code (did, collection,
 * rkey) → max seq}; DID tombstones from sync rows and from account rows saying {@code active=false,
 * status="deleted"}, {@code did → max seq}. A create, update or resync-create row is dropped when a
 * tombstone of its DID or of its record has a strictly greater seq; nothing else is ever dropped.
 * Filled by one thread, then only read (rewrite workers share it).
 */
public final class Tombstones {
    /** Label of {@code jetstream_compaction_tombstones_collected_total{kind}}. */
    public enum Source { RECORD, ACCOUNT, SYNC }

    /** Why a row is dropped ({@code jetstream_compaction_rows_dropped_total{reason}}). */
    public enum DropReason { RECORD, DID }

    private static final class Did {
        long didSeq;
        Map<String, Long> records;
    }

    private final Map<String, Did> byDid = new HashMap<>();
    private long recordCount;
    private long didTombCount;
    private long maxSeq;

    /**
     * Folds row {@code r} of {@code v} in when it is a tombstone; returns its source, or null for a
     * row that is none.
     */
    public Source observe(BlockView v, int r) {
        int kind = v.kindCode(r);
        long seq = v.seq(r);
        if (kind == Kind.UPDATE.code() || kind == Kind.DELETE.code()) {
            Did d = byDid.computeIfAbsent(v.did(r), k -> new Did());
            if (d.records == null) {
                d.records = new HashMap<>();
            }
            String key = recordKey(v, r);
            Long prev = d.records.get(key);
            if (prev == null) {
                recordCount++;
            }
            if (prev == null || prev < seq) {
                d.records.put(key, seq);
            }
            maxSeq = Math.max(maxSeq, seq);
            return Source.RECORD;
        }
        boolean sync = kind == Kind.SYNC.code();
        if (sync || kind == Kind.ACCOUNT.code()
                && accountDeleted(v.buffer(), v.payloadOffset(r), v.payloadLength(r))) {
            Did d = byDid.computeIfAbsent(v.did(r), k -> new Did());
            if (d.didSeq == 0) {
                didTombCount++;
            }
            d.didSeq = Math.max(d.didSeq, seq);
            maxSeq = Math.max(maxSeq, seq);
            return sync ? Source.SYNC : Source.ACCOUNT;
        }
        return null;
    }

    /** The drop rule: null keeps the row, otherwise the tombstone kind that supersedes it. */
    public DropReason drop(BlockView v, int r) {
        int kind = v.kindCode(r);
        if (kind != Kind.CREATE.code() && kind != Kind.UPDATE.code() && kind != Kind.CREATE_RESYNC.code()) {
            return null;
        }
        Did d = byDid.get(v.did(r));
        if (d == null) {
            return null;
        }
        long seq = v.seq(r);
        if (d.didSeq > seq) {
            return DropReason.DID;
        }
        if (d.records != null) {
            Long t = d.records.get(recordKey(v, r));
            if (t != null && t > seq) {
                return DropReason.RECORD;
            }
        }
        return null;
    }

    /** Whether no tombstone was folded. */
    public boolean isEmpty() {
        return byDid.isEmpty();
    }

    /** DIDs with at least one tombstone. */
    public int didCount() {
        return byDid.size();
    }

    /** Distinct tombstone keys: records plus DIDs with a DID tombstone. */
    public long size() {
        return recordCount + didTombCount;
    }

    /** The highest tombstone seq; rows at or above it are never dropped. */
    public long maxSeq() {
        return maxSeq;
    }

    /** One DID's tombstones as block narrowing needs them. */
    @FunctionalInterface
    interface DidTombstones {
        /**
         * @param didSeq the DID tombstone's seq, 0 for none
         * @param recordSeqByCollection per collection, the highest seq of the DID's record tombstones in it
         */
        void accept(String did, long didSeq, Map<String, Long> recordSeqByCollection);
    }

    /** Visits every DID with a tombstone. */
    void forEachDid(DidTombstones visitor) {
        for (Map.Entry<String, Did> e : byDid.entrySet()) {
            Did d = e.getValue();
            Map<String, Long> byCollection = new HashMap<>();
            if (d.records != null) {
                for (Map.Entry<String, Long> r : d.records.entrySet()) {
                    String collection = r.getKey().substring(0, r.getKey().indexOf('/'));
                    byCollection.merge(collection, r.getValue(), Math::max);
                }
            }
            visitor.accept(e.getKey(), d.didSeq, byCollection);
        }
    }

    /** The DIDs with tombstones, as UTF-8 (bloom narrowing of candidate segments). */
    public Iterable<byte[]> didBytes() {
        return () -> byDid.keySet().stream().map(s -> s.getBytes(StandardCharsets.UTF_8)).iterator();
    }

    // NSIDs cannot contain '/', so collection + '/' + rkey is unambiguous
    private static String recordKey(BlockView v, int r) {
        return v.collection(r) + '/' + v.rkey(r);
    }

    /**
     * Whether a stored {@code #account} body (DAG-CBOR) says the account is deleted:
     * {@code active=false} and {@code status="deleted"}. A body we cannot read is no tombstone (it
     * was validated at ingest; being wrong here can only keep rows, never drop them).
     */
    public static boolean accountDeleted(byte[] buf, int off, int len) {
        if (len == 0) {
            return false;
        }
        try {
            CborReader c = new CborReader(buf, off, len);
            int n = c.readMapHeader();
            Boolean active = null;
            boolean deleted = false;
            for (int i = 0; i < n; i++) {
                int k = c.readText();
                if (c.keyEquals(k, "active") && c.peekKind() == CborReader.KIND_BOOL) {
                    active = c.readBool();
                } else if (c.keyEquals(k, "status") && c.peekKind() == CborReader.KIND_TEXT) {
                    deleted = "deleted".equals(c.readString());
                } else {
                    c.skip();
                }
            }
            return Boolean.FALSE.equals(active) && deleted;
        } catch (DecodeException e) {
            return false;
        }
    }
}
