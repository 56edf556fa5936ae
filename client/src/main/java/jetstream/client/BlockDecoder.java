package jetstream.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.planner.PlanFilter;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
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

    BlockDecoder(boolean rawRecords, boolean cids) {
        this.rawRecords = rawRecords;
        this.cids = cids;
    }

    /** Decodes one getBlock answer (a bare zstd frame). */
    List<Event> block(byte[] frame, PlanFilter filter) {
        byte[] body = decompress(frame, 0, frame.length);
        List<Event> out = new ArrayList<>();
        rows(body, filter, out);
        return out;
    }

    /** Decodes the blocks of a whole downloaded segment that can hold rows inside the filter's window. */
    List<Event> segment(byte[] file, PlanFilter filter) {
        SegmentReader r;
        try {
            r = SegmentReader.open(ByteBuffer.wrap(file), false, zstd);
        } catch (SegmentException e) {
            throw new JetstreamException("downloaded segment is unreadable: " + e.getMessage(), e);
        }
        List<Event> out = new ArrayList<>();
        for (int b = 0; b < r.blockCount(); b++) {
            BlockIndexEntry e = r.entry(b);
            if (e.eventCount() == 0 || e.maxSeq() <= filter.afterSeq()
                    || (filter.hasBeforeSeq() && e.minSeq() > filter.beforeSeq())) {
                continue;
            }
            byte[] frame;
            try {
                frame = r.frameBytes(b);
            } catch (SegmentException ex) {
                throw new JetstreamException("downloaded segment block " + b + ": " + ex.getMessage(), ex);
            }
            byte[] body = decompress(frame, 0, frame.length);
            int n = rows(body, filter, out);
            if (n != e.eventCount()) {
                throw new JetstreamException("downloaded segment block " + b + " holds " + n + " rows, index says "
                        + e.eventCount());
            }
        }
        return out;
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
        long after = filter.afterSeq();
        long before = filter.hasBeforeSeq() ? filter.beforeSeq() : Long.MAX_VALUE;
        int n = v.size();
        for (int i = 0; i < n; i++) {
            long seq = v.seq(i);
            if (seq <= after || seq > before) {
                continue;
            }
            int kind = v.kindCode(i);
            String did = v.did(i);
            String collection = collection(v, i);
            if (!filter.matches(kind, did, collection, seq)) {
                continue;
            }
            Event ev = Event.archived(seq, WireEvent.displayTime(v.witnessedAt(i), v.indexedAt(i)), kind, did, collection,
                    v.rkey(i), v.rev(i), body, v.payloadOffset(i), v.payloadLength(i));
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
