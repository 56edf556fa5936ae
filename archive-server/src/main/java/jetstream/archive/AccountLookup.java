package jetstream.archive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Handle;
import jetstream.planner.SegmentSummary;
import jetstream.segment.BlockView;
import jetstream.segment.Kind;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;

/**
 * The status page's account lookup (docs/http-api.md: Listeners and routes: {@code /status?account=|did=|handle=}). The
 * reference answers from its metadata store; the archive-server never opens RocksDB (DESIGN.md),
 * so this answers from the sealed archive itself: the DID's rows found through the resident DID
 * blooms (events by kind, first and last seq and time, last commit rev, the newest
 * {@code #identity} handle and {@code #account} status). A handle is resolved to a DID through the
 * newest {@code #identity} rows that carry it ({@code $identity} sentinel blocks), never over the
 * network, so the page works offline. The unsealed tail (the active segment) is not searched.
 * Work is bounded (newest segments first, {@link #MAX_BLOCKS} blocks); a cut-short answer says so.
 */
final class AccountLookup {
    static final int MAX_BLOCKS = 512;
    static final int MAX_SEGMENTS_OPENED = 256;
    /** At most two lookups decode blocks at once; more get "busy" rather than queueing disk work. */
    private static final Semaphore SLOTS = new Semaphore(2);

    private AccountLookup() {}

    /** The query of a request: {@code did}, {@code handle} or {@code account} (either), or null. */
    static Map<String, Object> run(ManifestStore store, String did, String handle, String account) {
        String q = did != null && !did.isBlank() ? did.trim() : handle != null && !handle.isBlank() ? handle.trim()
                : account != null && !account.isBlank() ? account.trim() : null;
        if (q == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("query", q);
        boolean asDid = did != null && !did.isBlank() || (handle == null || handle.isBlank()) && q.startsWith("did:");
        if (asDid ? !Did.isValid(q) : !Handle.isValid(q)) {
            out.put("error", asDid ? "not a valid DID" : "not a valid handle");
            return out;
        }
        if (!SLOTS.tryAcquire()) {
            out.put("error", "too many lookups running; try again");
            return out;
        }
        try (ZstdFrames zstd = new ZstdFrames()) {
            Budget budget = new Budget();
            String target = q;
            if (!asDid) {
                String h = q.toLowerCase(Locale.ROOT);
                target = resolveHandle(store, h, zstd, budget);
                out.put("handleResolvedFrom", target == null ? null : "#identity event in the archive");
                if (target == null) {
                    out.put("found", false);
                    out.put("did", null);
                    out.put("partial", budget.exhausted);
                    out.put("blocksScanned", (long) budget.blocks);
                    out.put("note", budget.exhausted ? "no #identity event with this handle in the newest part of the archive"
                            + " searched (search budget reached)" : "no #identity event in the sealed archive names this handle");
                    return out;
                }
            }
            scanDid(store, target, zstd, budget, out);
            return out;
        } finally {
            SLOTS.release();
        }
    }

    private static final class Budget {
        int blocks;
        int segments;
        boolean exhausted;

        boolean take(boolean openSegment) {
            if (blocks >= MAX_BLOCKS || openSegment && segments >= MAX_SEGMENTS_OPENED) {
                exhausted = true;
                return false;
            }
            if (openSegment) {
                segments++;
            }
            return true;
        }
    }

    private static SegmentReader open(ManifestStore store, SegmentSummary s, ZstdFrames zstd) {
        try {
            ServedSegment served = store.current(s.name());
            return served == null ? null : SegmentReader.open(served.mapping(), false, zstd);
        } catch (IOException | SegmentException e) {
            return null; // vanished under a rewrite, or not servable: the manifest counts unreadable files
        }
    }

    private static String resolveHandle(ManifestStore store, String handle, ZstdFrames zstd, Budget budget) {
        List<SegmentSummary> segs = store.manifest().segments();
        BlockView view = new BlockView();
        CborReader r = new CborReader();
        for (int si = segs.size() - 1; si >= 0; si--) {
            if (!budget.take(true)) {
                return null;
            }
            SegmentReader reader = open(store, segs.get(si), zstd);
            if (reader == null) {
                continue;
            }
            BitSet blocks = reader.blocksForCollection(Kind.IDENTITY.sentinel());
            for (int b = blocks.previousSetBit(reader.blockCount() - 1); b >= 0; b = blocks.previousSetBit(b - 1)) {
                if (!budget.take(false)) {
                    return null;
                }
                budget.blocks++;
                reader.block(b, view, zstd);
                for (int i = view.size() - 1; i >= 0; i--) {
                    if (view.kind(i) == Kind.IDENTITY) {
                        String h = text(r, view, i, "handle");
                        if (h != null && h.toLowerCase(Locale.ROOT).equals(handle)) {
                            return view.did(i);
                        }
                    }
                }
            }
        }
        return null;
    }

    private static void scanDid(ManifestStore store, String did, ZstdFrames zstd, Budget budget, Map<String, Object> out) {
        byte[] key = did.getBytes(StandardCharsets.UTF_8);
        jetstream.segment.GloomFilter.Probe probe = jetstream.segment.GloomFilter.Probe.of(key);
        long[] byKind = new long[8];
        long events = 0;
        long firstSeq = -1;
        long firstAt = 0;
        long lastSeq = -1;
        long lastAt = 0;
        String lastRev = null;
        String handle = null;
        long handleSeq = -1;
        Map<String, Object> account = null;
        BlockView view = new BlockView();
        CborReader r = new CborReader();
        List<SegmentSummary> segs = store.manifest().segments();
        scan:
        for (int si = segs.size() - 1; si >= 0; si--) {
            SegmentSummary s = segs.get(si);
            if (!s.segmentMightContain(probe)) {
                continue;
            }
            if (!budget.take(true)) {
                break;
            }
            SegmentReader reader = open(store, s, zstd);
            if (reader == null) {
                continue;
            }
            for (int b = reader.blockCount() - 1; b >= 0; b--) {
                if (!s.blockMightContain(b, probe)) {
                    continue;
                }
                if (!budget.take(false)) {
                    break scan;
                }
                budget.blocks++;
                reader.block(b, view, zstd);
                for (int i = view.size() - 1; i >= 0; i--) {
                    if (!view.didEquals(i, key, 0, key.length)) {
                        continue;
                    }
                    long seq = view.seq(i);
                    events++;
                    byKind[view.kindCode(i)]++;
                    if (lastSeq < 0) {
                        lastSeq = seq;
                        lastAt = view.witnessedAt(i);
                    }
                    firstSeq = seq;
                    firstAt = view.witnessedAt(i);
                    Kind k = view.kind(i);
                    if (lastRev == null && (k.isCommit() || k == Kind.SYNC) && view.revLength(i) > 0) {
                        lastRev = view.rev(i);
                    }
                    if (handleSeq < 0 && k == Kind.IDENTITY) {
                        handleSeq = seq;
                        handle = text(r, view, i, "handle");
                    }
                    if (account == null && k == Kind.ACCOUNT) {
                        account = new LinkedHashMap<>();
                        account.put("active", bool(r, view, i, "active"));
                        account.put("status", text(r, view, i, "status"));
                        account.put("seq", seq);
                    }
                }
            }
        }
        out.put("did", did);
        out.put("found", events > 0);
        out.put("events", events);
        Map<String, Object> kinds = new LinkedHashMap<>();
        for (Kind k : Kind.values()) {
            kinds.put(k.name().toLowerCase(Locale.ROOT), byKind[k.code()]);
        }
        out.put("byKind", kinds);
        out.put("firstSeq", firstSeq < 0 ? null : firstSeq);
        out.put("firstSeen", firstSeq < 0 ? null : Instant.ofEpochSecond(0, firstAt * 1000).toString());
        out.put("lastSeq", lastSeq < 0 ? null : lastSeq);
        out.put("lastSeen", lastSeq < 0 ? null : Instant.ofEpochSecond(0, lastAt * 1000).toString());
        out.put("lastRev", lastRev);
        out.put("handle", handle);
        out.put("account", account);
        out.put("blocksScanned", (long) budget.blocks);
        out.put("partial", budget.exhausted);
        out.put("note", budget.exhausted ? "search budget reached: counts and first seen cover the newest part of the archive only"
                : "sealed segments only; the unsealed tail is not searched");
    }

    /** A text field of a stored {@code #identity}/{@code #account} body, null when absent or not text. */
    private static String text(CborReader r, BlockView v, int i, String field) {
        try {
            if (!seek(r, v, i, field) || r.peekKind() != CborReader.KIND_TEXT) {
                return null;
            }
            return r.readString();
        } catch (DecodeException e) {
            return null;
        }
    }

    private static Boolean bool(CborReader r, BlockView v, int i, String field) {
        try {
            if (!seek(r, v, i, field) || r.peekKind() != CborReader.KIND_BOOL) {
                return null;
            }
            return r.readBool();
        } catch (DecodeException e) {
            return null;
        }
    }

    /** Positions {@code r} at the value of top-level key {@code field} of row {@code i}'s payload. */
    private static boolean seek(CborReader r, BlockView v, int i, String field) {
        r.reset(v.buffer(), v.payloadOffset(i), v.payloadLength(i));
        if (!r.hasRemaining() || r.peekKind() != CborReader.KIND_MAP) {
            return false;
        }
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int k = 0; k < n; k++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, field)) {
                return true;
            }
            r.skip();
        }
        return false;
    }
}
