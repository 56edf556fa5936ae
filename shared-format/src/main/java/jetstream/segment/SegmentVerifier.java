package jetstream.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * Full structural check of a sealed segment: everything {@link SegmentReader#open} checks
 * (including the checksum), plus that the blocks tile the region between the header and the footer,
 * every block decodes and agrees with its index entry, seqs strictly increase across the whole
 * file, bounds contain their rows, both bloom levels contain every DID, and the collection index
 * and the DID census (when there is one) equal those rebuilt from the rows. Never throws for a bad
 * file: the result carries the reason.
 */
public final class SegmentVerifier {
    private SegmentVerifier() {}

    /** Outcome of a verification; {@code reason} is one line, null when {@code ok}. */
    public record Result(boolean ok, String reason, int blocks, long events, long uniqueDids) {
        static Result failed(String reason) {
            return new Result(false, reason, 0, 0, 0);
        }
    }

    public static Result verify(Path path) {
        ByteBuffer file;
        try {
            file = SegmentReader.map(path);
        } catch (IOException e) {
            return Result.failed("IO: " + e.getMessage());
        } catch (SegmentException e) {
            return Result.failed(e.oneLine());
        }
        return verify(file);
    }

    public static Result verify(ByteBuffer file) {
        try (ZstdFrames zstd = new ZstdFrames()) {
            return verify(file, zstd);
        }
    }

    /** Verifies a whole file held in a buffer, using the caller's zstd contexts. */
    public static Result verify(ByteBuffer file, ZstdFrames zstd) {
        try {
            return check(SegmentReader.open(file, true, zstd), zstd);
        } catch (SegmentException e) {
            return Result.failed(e.oneLine());
        }
    }

    private static Result check(SegmentReader r, ZstdFrames zstd) {
        SegmentHeader h = r.header();
        long expectedOffset = SegmentLimits.HEADER_SIZE;
        for (int b = 0; b < r.blockCount(); b++) {
            BlockIndexEntry e = r.entry(b);
            if (e.offset() != expectedOffset) {
                return Result.failed("block " + b + " starts at " + e.offset() + ", expected " + expectedOffset);
            }
            expectedOffset = e.end();
        }
        if (expectedOffset != h.footerOffset()) {
            return Result.failed("blocks end at " + expectedOffset + " but the footer starts at " + h.footerOffset());
        }
        BlockView view = new BlockView();
        Set<String> allDids = new HashSet<>();
        DidSet rowsPerDid = new DidSet();
        CollectionIndex.Builder collections = new CollectionIndex.Builder();
        long events = 0;
        boolean any = false;
        long prevSeq = 0;
        for (int b = 0; b < r.blockCount(); b++) {
            BlockIndexEntry e = r.entry(b);
            r.block(b, view, zstd);
            collections.addBlock(view);
            GloomFilter blockBloom = r.blockBlooms().bloom(b);
            Set<String> blockDids = new HashSet<>();
            for (int i = 0; i < view.size(); i++) {
                long seq = view.seq(i);
                if (any && Long.compareUnsigned(seq, prevSeq) <= 0) {
                    return Result.failed("block " + b + " row " + i + " seq " + Long.toUnsignedString(seq)
                            + " does not follow " + Long.toUnsignedString(prevSeq));
                }
                any = true;
                prevSeq = seq;
                if (!e.contains(seq, view.witnessedAt(i))) {
                    return Result.failed("block " + b + " row " + i + " lies outside the block's index bounds");
                }
                if (!contains(h, seq, view.witnessedAt(i))) {
                    return Result.failed("block " + b + " row " + i + " lies outside the header's bounds");
                }
                int dl = view.didLength(i);
                if (dl == 0) {
                    continue;
                }
                byte[] did = Arrays.copyOfRange(view.buffer(), view.didOffset(i), view.didOffset(i) + dl);
                rowsPerDid.increment(rowsPerDid.put(did, 0, dl, GloomFilter.Probe.of(did)));
                String key = new String(did, StandardCharsets.ISO_8859_1);
                allDids.add(key);
                if (blockDids.add(key) && !blockBloom.mightContain(did)) {
                    return Result.failed("block " + b + " bloom misses DID " + view.did(i));
                }
                if (r.segmentBloom() == null || !r.segmentBloom().mightContain(did)) {
                    return Result.failed("segment bloom misses DID " + view.did(i));
                }
            }
            if (blockBloom.count() != blockDids.size()) {
                return Result.failed("block " + b + " bloom counts " + blockBloom.count() + " DIDs, block has "
                        + blockDids.size());
            }
            events += view.size();
        }
        if (events != h.eventCount()) {
            return Result.failed("header event_count " + h.eventCount() + ", blocks hold " + events);
        }
        if (allDids.size() != h.uniqueDidCount()) {
            return Result.failed("header unique_did_count " + h.uniqueDidCount() + ", rows hold " + allDids.size());
        }
        if (r.segmentBloom() != null && r.segmentBloom().count() != allDids.size()) {
            return Result.failed("segment bloom counts " + r.segmentBloom().count() + " DIDs, rows hold "
                    + allDids.size());
        }
        if (!collections.build().equals(r.collectionIndex())) {
            return Result.failed("collection index does not match the rows");
        }
        if (!censusMatches(r, rowsPerDid)) {
            return Result.failed("DID census does not match the rows");
        }
        return new Result(true, null, r.blockCount(), events, allDids.size());
    }

    /** Whether the file's DID census, when it has one, is the one a seal of its rows writes. */
    private static boolean censusMatches(SegmentReader r, DidSet rowsPerDid) {
        ByteBuffer file = r.bytes();
        FooterTail tail = FooterTail.find(file, (int) r.header().collectionIndexOffset(), file.limit());
        if (tail.censusAt() < 0) {
            return true;
        }
        byte[] stored = new byte[tail.censusLength()];
        file.get(tail.censusAt(), stored, 0, stored.length);
        DidCensus expected = DidCensus.of(rowsPerDid);
        return expected != null && Arrays.equals(expected.serialize(), stored);
    }

    private static boolean contains(SegmentHeader h, long seq, long witnessedAt) {
        return Long.compareUnsigned(seq, h.minSeq()) >= 0 && Long.compareUnsigned(seq, h.maxSeq()) <= 0
                && witnessedAt >= h.minWitnessedAt() && witnessedAt <= h.maxWitnessedAt();
    }
}
