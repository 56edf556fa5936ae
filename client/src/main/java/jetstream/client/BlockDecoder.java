package jetstream.client;

import java.nio.charset.StandardCharsets;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.planner.PlanFilter;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.ZstdFrames;
import jetstream.wire.WireEvent;

/**
 * Turns downloaded archive bytes into events: block frames are decompressed and decoded with
 * {@link BlockView} straight from the stored columns (no JSON on the way), each row is tested with
 * the exact predicate before any object is built, and every decoded block gets its own body array
 * so events can alias their payloads. One instance per worker thread.
 */
final class BlockDecoder {
    private final ZstdFrames zstd = new ZstdFrames();
    private final BlockView view = new BlockView();
    private final boolean rawRecords;
    private final boolean cids;
    /** Collection strings repeat within a block; this avoids re-decoding them per row. */
    private final String[] collectionCache = new String[64];
    private final int[] collectionCacheOff = new int[64];
    private final int[] collectionCacheLen = new int[64];
    private final int[] fields = new int[6];

    BlockDecoder(boolean rawRecords, boolean cids) {
        this.rawRecords = rawRecords;
        this.cids = cids;
    }

    /** Bytes held per decoded event beyond its block body: the object and its key strings. */
    static final int EVENT_OVERHEAD = 256;

    /**
     * Bytes a block with this much uncompressed body is charged before it is decoded: the body, plus
     * (unless records stay raw) room for the rendered record JSON; corrected by {@link #decode}'s answer.
     */
    long estimate(long uncompressed, long eventCount) {
        return uncompressed * (rawRecords ? 1 : 3) + eventCount * EVENT_OVERHEAD;
    }

    /** The declared content size of a getBlock frame (or its compressed size when undeclared). */
    static long declaredSize(byte[] frame) {
        try {
            long n = ZstdFrames.declaredContentSize(frame, 0, frame.length);
            return n < 0 ? frame.length : n;
        } catch (SegmentException e) {
            return frame.length;
        }
    }

    /**
     * Decodes one block frame, appending the rows inside the filter to {@code out}; checks the block
     * against its index entry when one is known. Returns the bytes the decoded events hold.
     */
    long decode(byte[] frame, BlockIndexEntry entry, PlanFilter filter, List<Event> out) {
        byte[] body = decompress(frame, 0, frame.length);
        if (entry != null && body.length != entry.uncompressedSize()) {
            throw new JetstreamException("block of " + body.length + " bytes, index says " + entry.uncompressedSize());
        }
        int before = out.size();
        int n = rows(body, filter, out);
        if (entry != null && n != entry.eventCount()) {
            throw new JetstreamException("block holds " + n + " rows, index says " + entry.eventCount());
        }
        long held = out.size() > before ? body.length : 0;
        for (int i = before; i < out.size(); i++) {
            held += EVENT_OVERHEAD + out.get(i).renderedBytes();
        }
        return held;
    }

    private byte[] decompress(byte[] frame, int off, int len) {
        try {
            return zstd.decompress(frame, off, len);
        } catch (SegmentException e) {
            throw new JetstreamException("bad block frame: " + e.getMessage(), e);
        }
    }

    /** Appends matching rows of one block body; returns the block's row count. */
    private int rows(byte[] body, PlanFilter filter, List<Event> out) {
        BlockView v;
        try {
            v = view.decode(body, 0, body.length);
        } catch (SegmentException | DecodeException e) {
            throw new JetstreamException("bad block body: " + e.getMessage(), e);
        }
        java.util.Arrays.fill(collectionCache, null);
        boolean didsGiven = !filter.dids().isEmpty();
        long after = filter.afterSeq();
        long before = filter.hasBeforeSeq() ? filter.beforeSeq() : Long.MAX_VALUE;
        int n = v.size();
        for (int i = 0; i < n; i++) {
            long seq = v.seq(i);
            if (seq <= after || seq > before) {
                continue;
            }
            int kind = v.kindCode(i);
            // the DID string is built here only when the filter needs it; events decode it on demand
            String did = didsGiven ? v.did(i) : null;
            String collection = collection(v, i);
            if (!filter.matches(kind, did, collection, seq)) {
                continue;
            }
            fields[0] = v.didOffset(i);
            fields[1] = v.didLength(i);
            fields[2] = v.rkeyOffset(i);
            fields[3] = v.rkeyLength(i);
            fields[4] = v.revOffset(i);
            fields[5] = v.revLength(i);
            Event ev = Event.archived(seq, WireEvent.displayTime(v.witnessedAt(i), v.indexedAt(i)), kind, did, collection,
                    body, fields, v.payloadOffset(i), v.payloadLength(i));
            if (!rawRecords || cids) {
                ev.warm(rawRecords, cids);
            }
            out.add(ev);
        }
        return n;
    }

    private String collection(BlockView v, int i) {
        int off = v.collectionOffset(i);
        int len = v.collectionLength(i);
        if (len == 0) {
            return "";
        }
        byte[] buf = v.buffer();
        int h = 0;
        for (int k = 0; k < len; k++) {
            h = 31 * h + buf[off + k];
        }
        int slot = h & 63;
        String c = collectionCache[slot];
        if (c != null && collectionCacheLen[slot] == len
                && java.util.Arrays.equals(buf, collectionCacheOff[slot], collectionCacheOff[slot] + len, buf, off, off + len)) {
            return c;
        }
        c = new String(buf, off, len, StandardCharsets.UTF_8);
        collectionCache[slot] = c;
        collectionCacheOff[slot] = off;
        collectionCacheLen[slot] = len;
        return c;
    }
}
