package jetstream.segment;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * Derives every footer field and the finalized header from the blocks of a segment, exactly as the
 * seal does (docs/segment-format.md): feed each block's placement and decoded rows in file order, then
 * {@link #build}. The sections are laid out contiguously: block index, segment DID bloom, per-block
 * bloom region, collection index, DID-hash section ({@link DidHashSection}), DID census
 * ({@link DidCensus}). For compaction rewrites, {@link #addBlock(long, long, BlockView, BlockIndexEntry)}
 * keeps a block's original bounds and {@link #keepHeaderBounds} the header's. Not thread-safe.
 */
public final class FooterBuilder {
    /** False-positive rate of the segment-level DID bloom. */
    public static final double SEGMENT_BLOOM_FP_RATE = 0.001;

    private final ZstdFrames zstd;
    private final List<BlockIndexEntry> entries = new ArrayList<>();
    private final CollectionIndex.Builder collections = new CollectionIndex.Builder();
    private final DidSet segmentDids = new DidSet();
    /** Each block's distinct DIDs, as their hashes: all the per-block blooms need. */
    private final List<GloomFilter.Probe[]> blockDids = new ArrayList<>();
    /** The current block's distinct DIDs; one set reused for every block (growing it per block was a top cost). */
    private final DidSet blockSeen = new DidSet();
    private long events;
    private boolean anyRow;
    private long minSeq;
    private long maxSeq;
    private long minWitnessed;
    private long maxWitnessed;
    private long nextOffset = SegmentLimits.HEADER_SIZE;
    private SegmentHeader keptBounds;
    /** The original's footer when a compaction rewrite copies blocks without decoding them. */
    private OriginalFooter original;
    private int verbatimBlocks;
    /**
     * Rewrite mode: {@link #segmentDids} holds every DID of the segment although some blocks stay
     * unread for their blooms (a DID left, the per-block sizing did not change), so the segment
     * bloom is rebuilt and the per-block blooms of unread blocks copied.
     */
    private boolean segmentDidsComplete;
    /** Rewrite mode, original with a census: that census minus the dropped rows. */
    private DidCensus census;
    /** {@link #census} is the segment's DID set (some DIDs left, blocks stay unread). */
    private boolean censusIsSegmentSet;
    /** An unread block's DIDs into the segment set only (its per-block bloom is copied). */
    private final BlockDidColumn.Sink toSegment = (buf, off, len) ->
            segmentDids.addCopy(buf, off, len, GloomFilter.Probe.of(buf, off, len));

    public FooterBuilder(ZstdFrames zstd) {
        this.zstd = zstd;
    }

    /** Rewrite mode: the header's min/max seq and witnessed_at are copied from {@code original}. */
    public FooterBuilder keepHeaderBounds(SegmentHeader original) {
        this.keptBounds = original;
        return this;
    }

    /**
     * Compaction rewrite mode over blocks that may be copied without being decoded
     * ({@link #addVerbatimBlock}): keeps the original's header bounds, and reuses the original
     * footer's per-block blooms, segment bloom and collection bitmasks where they provably equal what
     * rebuilding from the surviving rows would give, so the footer is byte-identical to a full
     * rewrite's. Each dropped row must be reported to {@link #dropped}.
     *
     * @param footer the original bytes {@code [footer_offset, EOF)}, checksum already verified
     */
    public FooterBuilder rewriteOf(SegmentHeader header, byte[] footer) {
        keepHeaderBounds(header);
        original = new OriginalFooter(header, footer, zstd);
        return this;
    }

    /** The block a loader is asked for: the original's, decoded (its frame is copied unchanged). */
    @FunctionalInterface
    public interface BlockLoader {
        BlockView load(int block);

        /** Each row's DID of the original block, in row order: a loader may decode less than {@link #load} for it. */
        default void dids(int block, BlockDidColumn.Sink sink) {
            BlockView v = load(block);
            for (int i = 0; i < v.size(); i++) {
                if (v.didLength(i) > 0) {
                    sink.did(v.buffer(), v.didOffset(i), v.didLength(i));
                }
            }
        }
    }

    public int blockCount() {
        return entries.size();
    }

    /**
     * Whether the next block can be added unread with {@link #addVerbatimBlock}: false when one of its
     * collections lost every earlier occurrence, so its place in the first-seen order depends on the
     * block's row order (the caller then decodes it and uses {@link #addBlock(long, long, BlockView,
     * BlockIndexEntry)}).
     */
    public boolean canAddVerbatim() {
        return original.collectionsResolvable(entries.size(), collections);
    }

    /**
     * Adds the next block copied from the original without decoding it (rewrite mode): its entry is
     * the original's with the new placement, its collections come from the original bitmask, its
     * blooms are resolved at {@link #buildRewrite}.
     */
    public BlockIndexEntry addVerbatimBlock(long offset, long compressedSize, BlockIndexEntry originalEntry) {
        if (offset < nextOffset) {
            throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX,
                    "block at " + offset + " overlaps the previous block ending at " + nextOffset);
        }
        int block = entries.size();
        collections.startBlock();
        original.addCollections(block, collections);
        events += originalEntry.eventCount();
        blockDids.add(null);
        verbatimBlocks++;
        BlockIndexEntry entry = originalEntry.withPlacement(offset, compressedSize);
        entries.add(entry);
        nextOffset = entry.end();
        return entry;
    }

    /** Rewrite mode: row {@code row} of {@code block} (the original rows) is dropped. */
    public void dropped(BlockView block, int row) {
        original.dropped(block, row);
    }

    /**
     * Adds the next block with bounds computed from its rows (the seal).
     *
     * @param offset file offset of the block's length prefix
     * @param compressedSize frame length, excluding the prefix
     * @return the block index entry recorded
     */
    public BlockIndexEntry addBlock(long offset, long compressedSize, BlockView block) {
        return addBlock(offset, compressedSize, block, null);
    }

    /**
     * Adds the next block; a non-null {@code envelope} supplies the seq and witnessed bounds (a
     * compaction rewrite keeps the original block's), which must contain every row.
     *
     * @throws SegmentException CORRUPT_SEGMENT when rows are not in strictly ascending seq order,
     *     INVALID_BLOCK_INDEX when blocks overlap or the envelope does not contain the rows
     */
    public BlockIndexEntry addBlock(long offset, long compressedSize, BlockView block, BlockIndexEntry envelope) {
        if (offset < nextOffset) {
            throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX,
                    "block at " + offset + " overlaps the previous block ending at " + nextOffset);
        }
        if (compressedSize < 0 || compressedSize > 0xFFFFFFFFL) {
            throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX, "frame size " + compressedSize);
        }
        int n = block.size();
        long bMinSeq = 0;
        long bMaxSeq = 0;
        long bMinW = 0;
        long bMaxW = 0;
        collections.startBlock();
        DidSet seen = blockSeen;
        seen.clear();
        byte[] buf = block.buffer();
        for (int i = 0; i < n; i++) {
            long seq = block.seq(i);
            long w = block.witnessedAt(i);
            if (anyRow && Long.compareUnsigned(seq, maxSeq) <= 0) {
                throw SegmentException.corrupt("seq " + Long.toUnsignedString(seq) + " of block " + entries.size()
                        + " does not follow " + Long.toUnsignedString(maxSeq));
            }
            if (i == 0) {
                bMinSeq = seq;
                bMinW = w;
                bMaxW = w;
            }
            bMaxSeq = seq;
            bMinW = Math.min(bMinW, w);
            bMaxW = Math.max(bMaxW, w);
            if (!anyRow) {
                minSeq = seq;
                minWitnessed = w;
                maxWitnessed = w;
                anyRow = true;
            }
            maxSeq = seq;
            minWitnessed = Math.min(minWitnessed, w);
            maxWitnessed = Math.max(maxWitnessed, w);
            addDid(block, i, seen);
            collections.addRow(block.kindCode(i), buf, block.collectionOffset(i), block.collectionLength(i));
        }
        events += n;
        if (events > 0xFFFFFFFFL) {
            throw new SegmentException(SegmentException.Type.BUFFER_FULL, "segment holds more than 2^32-1 events");
        }
        blockDids.add(seen.probes());
        BlockIndexEntry entry;
        if (envelope == null) {
            entry = new BlockIndexEntry(offset, compressedSize, block.bodyLength(), n, bMinSeq, bMaxSeq, bMinW, bMaxW);
        } else {
            entry = new BlockIndexEntry(offset, compressedSize, block.bodyLength(), n, envelope.minSeq(),
                    envelope.maxSeq(), envelope.minWitnessedAt(), envelope.maxWitnessedAt());
            if (n > 0 && !(entry.contains(bMinSeq, bMinW) && entry.contains(bMaxSeq, bMaxW))) {
                throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX,
                        "block " + entries.size() + " rows fall outside the kept envelope");
            }
        }
        entries.add(entry);
        nextOffset = entry.end();
        return entry;
    }

    /**
     * Builds the footer for a file whose blocks end at {@code footerOffset}.
     *
     * @throws SegmentException INVALID_FOOTER when {@code footerOffset} is before the last block's end
     */
    public Footer build(long footerOffset) {
        return build(footerOffset, c -> c != 0);
    }

    /**
     * Rewrite mode's build: blocks added unread whose DIDs are needed after all (a DID whose rows
     * were all dropped from the decoded blocks may be gone from the segment, or the per-block bloom
     * size changed) are decoded through {@code originals}.
     */
    public Footer buildRewrite(long footerOffset, BlockLoader originals) {
        if (verbatimBlocks > 0) {
            resolveVerbatim(originals);
        }
        return build(footerOffset);
    }

    private void resolveVerbatim(BlockLoader originals) {
        if (original.census() != null) {
            resolveByCensus(originals);
            return;
        }
        boolean gone = false;
        DidSet dropped = original.droppedDids();
        // Unread blocks whose DIDs are in the segment set already: only their DID column was read (a
        // fraction of the body), enough to tell whether a dropped row's DID is still in the segment.
        java.util.BitSet didsRead = new java.util.BitSet(blockDids.size());
        for (int i = 0; i < dropped.size() && !gone; i++) {
            byte[] did = dropped.key(i);
            GloomFilter.Probe p = dropped.probe(i);
            for (int b = 0; b < blockDids.size() && segmentDids.indexOf(did, 0, did.length, p) < 0; b++) {
                if (blockDids.get(b) == null && !didsRead.get(b) && original.blooms().mightContain(b, did)) {
                    originals.dids(b, toSegment);
                    didsRead.set(b);
                }
            }
            // a DID left the segment: the segment bloom must be rebuilt from every DID
            gone = segmentDids.indexOf(did, 0, did.length, p) < 0;
        }
        if (needsEveryBlock()) {
            materializeAll(originals);
        } else if (gone) {
            // Only the segment bloom and count need every DID: an unread block keeps its DIDs and the
            // bloom dimensions, so its per-block bloom is copied and its DIDs go to the segment set only.
            for (int b = 0; b < blockDids.size(); b++) {
                if (blockDids.get(b) == null && !didsRead.get(b)) {
                    originals.dids(b, toSegment);
                }
            }
            segmentDidsComplete = true;
        }
        original.fixCounts(collections);
    }

    /**
     * With the original's census no unread block is read for the segment's DIDs: the census minus
     * the dropped rows says which DIDs left and holds the probes of those that stay.
     */
    private void resolveByCensus(BlockLoader originals) {
        census = original.census().minus(original.droppedDids());
        if (needsEveryBlock()) {
            materializeAll(originals);
        } else if (census.size() < original.census().size()) {
            censusIsSegmentSet = true;
        }
        original.fixCounts(collections);
    }

    /**
     * Whether every unread block must be decoded for its per-block bloom: the right-sized bloom
     * dimensions changed, or the original has no segment bloom to reuse.
     */
    private boolean needsEveryBlock() {
        int capacity = 1;
        for (int b = 0; b < blockDids.size(); b++) {
            GloomFilter.Probe[] dids = blockDids.get(b);
            capacity = (int) Math.max(capacity, dids != null ? dids.length : original.blooms().bloom(b).count());
        }
        return !GloomFilter.optimalParams(capacity, BlockBloomRegion.FP_RATE).equals(original.bloomParams())
                || !original.hasSegmentBloom();
    }

    private void materializeAll(BlockLoader originals) {
        for (int b = 0; b < blockDids.size(); b++) {
            if (blockDids.get(b) == null) {
                materialize(b, originals);
            }
        }
    }

    /** Replaces an unread block's placeholder with its DIDs. */
    private void materialize(int b, BlockLoader originals) {
        blockDids.set(b, collectDids(originals.load(b)));
        verbatimBlocks--;
    }

    private GloomFilter.Probe[] collectDids(BlockView block) {
        DidSet seen = blockSeen;
        seen.clear();
        for (int i = 0; i < block.size(); i++) {
            addDid(block, i, seen);
        }
        return seen.probes();
    }

    /** Row {@code i}'s DID into the block's set (value: index in the segment set) and the segment's (value: rows). */
    private void addDid(BlockView block, int i, DidSet seen) {
        int dl = block.didLength(i);
        if (dl > 0) {
            byte[] buf = block.buffer();
            int dOff = block.didOffset(i);
            int at = seen.lastIfSame(buf, dOff, dl);
            if (at < 0) {
                GloomFilter.Probe probe = GloomFilter.Probe.of(buf, dOff, dl);
                int n = seen.size();
                at = seen.put(buf, dOff, dl, probe);
                if (at == n) {
                    byte[] key = seen.key(at);
                    seen.setValue(at, segmentDids.put(key, 0, key.length, probe));
                }
            }
            segmentDids.increment(seen.value(at));
        }
    }

    /**
     * A sealed checksum must not be 0 (0 means "active"). If it is (odds 2^-64), the collection
     * index is re-encoded as a frame without a content checksum — different bytes, same content —
     * and the checksum recomputed (docs/decisions.md). {@code accept} lets tests force that path.
     */
    Footer build(long footerOffset, LongPredicate accept) {
        if (footerOffset < nextOffset) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER,
                    "footer_offset " + footerOffset + " is inside the block region ending at " + nextOffset);
        }
        BlockIndex index = new BlockIndex(entries);
        byte[] indexBytes = new byte[index.serializedSize()];
        index.writeTo(indexBytes, 0);
        BlockIndex.parse(indexBytes, 0, indexBytes.length, entries.size(), footerOffset);
        byte[] segmentBloom;
        long uniqueDids;
        if (censusIsSegmentSet) {
            segmentBloom = census.segmentBloom();
            uniqueDids = census.size();
        } else if (verbatimBlocks > 0 && !segmentDidsComplete) {
            // every DID is still in the segment and the per-block sizing is unchanged (resolveVerbatim)
            segmentBloom = original.segmentBloomBytes();
            uniqueDids = original.header().uniqueDidCount();
        } else {
            GloomFilter bloom = GloomFilter.create(segmentDids.size(), SEGMENT_BLOOM_FP_RATE);
            for (int i = 0; i < segmentDids.size(); i++) {
                bloom.add(segmentDids.probe(i));
            }
            segmentBloom = bloom.serialize();
            uniqueDids = segmentDids.size();
        }
        BlockBloomRegion region = verbatimBlocks > 0
                ? BlockBloomRegion.build(blockDids, original.bloomParams(), original.blooms())
                : BlockBloomRegion.build(blockDids);
        byte[] hashes = didHashSection();
        byte[] censusSection = censusBytes();
        byte[] tail = Arrays.copyOf(hashes, hashes.length + censusSection.length);
        System.arraycopy(censusSection, 0, tail, hashes.length, censusSection.length);
        CollectionIndex collectionIndex = collections.build();
        Footer footer = assemble(footerOffset, index, segmentBloom, uniqueDids, region, collectionIndex.serialize(zstd),
                tail);
        if (accept.test(footer.header().checksum())) {
            return footer;
        }
        try (ZstdFrames plain = new ZstdFrames(zstd.level(), false)) {
            footer = assemble(footerOffset, index, segmentBloom, uniqueDids, region, collectionIndex.serialize(plain),
                    tail);
        }
        if (footer.header().checksum() == 0) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, "segment checksum is 0 twice");
        }
        return footer;
    }

    /**
     * The DID-hash section: a seal writes one; a rewrite keeps the original's presence (a Go-written
     * file stays without), reusing its bytes when blocks were copied unread while every original DID
     * is still in the segment (the set is unchanged); when DIDs left, from the complete DID set.
     */
    private byte[] didHashSection() {
        if (original != null && original.didHashSection() == null) {
            return new byte[0];
        }
        if (censusIsSegmentSet) {
            return census.didHashSection();
        }
        if (verbatimBlocks > 0 && !segmentDidsComplete) {
            return original.didHashSection();
        }
        int[] hashes = new int[segmentDids.size()];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = DidHashSection.hash(segmentDids.probe(i));
        }
        return DidHashSection.serialize(hashes, hashes.length);
    }

    /**
     * The DID census: a seal writes one (none when two DIDs share a probe); a rewrite keeps the
     * original's presence, counting the surviving rows when every block was decoded and otherwise
     * taking the original's minus the dropped rows (the same entries).
     */
    private byte[] censusBytes() {
        if (original != null && original.census() == null) {
            return new byte[0];
        }
        DidCensus c = verbatimBlocks > 0 ? census : DidCensus.of(segmentDids);
        return c == null ? new byte[0] : c.serialize();
    }

    private Footer assemble(long footerOffset, BlockIndex index, byte[] segmentBloom, long uniqueDids,
                            BlockBloomRegion region, byte[] collectionIndex, byte[] tail) {
        int size = index.serializedSize() + segmentBloom.length + region.serializedSize()
                + collectionIndex.length + tail.length;
        byte[] footer = new byte[size];
        int p = index.writeTo(footer, 0);
        long didBloomOffset = footerOffset + p;
        System.arraycopy(segmentBloom, 0, footer, p, segmentBloom.length);
        p += segmentBloom.length;
        long blockBloomOffset = footerOffset + p;
        p += region.writeTo(footer, p);
        long collectionOffset = footerOffset + p;
        System.arraycopy(collectionIndex, 0, footer, p, collectionIndex.length);
        System.arraycopy(tail, 0, footer, p + collectionIndex.length, tail.length);
        boolean keep = keptBounds != null;
        SegmentHeader h = new SegmentHeader(0, SegmentHeader.VERSION, entries.size(), events, uniqueDids,
                keep ? keptBounds.minSeq() : anyRow ? minSeq : 0,
                keep ? keptBounds.maxSeq() : anyRow ? maxSeq : 0,
                keep ? keptBounds.minWitnessedAt() : anyRow ? minWitnessed : 0,
                keep ? keptBounds.maxWitnessedAt() : anyRow ? maxWitnessed : 0,
                footerOffset, didBloomOffset, blockBloomOffset, collectionOffset, footerOffset);
        return finish(h, footer);
    }

    private static Footer finish(SegmentHeader unsummed, byte[] footer) {
        long checksum = SegmentHeader.computeChecksum(unsummed.toBytes(), footer, 0, footer.length);
        SegmentHeader h = unsummed.withChecksum(checksum);
        return new Footer(h, h.toBytes(), footer);
    }

    /**
     * The timestamp-import patch (docs/segment-format.md): blocks moved but the footer after the block
     * index (blooms, collection index, DID-hash section, DID census) is copied byte for byte from the
     * original; offsets and the checksum are recomputed, everything else is kept.
     *
     * @param original the original file's header
     * @param entries the new block index, same count as the original
     * @param tail the original bytes {@code [did_bloom_offset, EOF)}
     * @param footerOffset where the new footer starts
     * @throws SegmentException INVALID_FOOTER for a block count change, INVALID_BLOCK_INDEX for an
     *     invalid new index, and INVALID_FOOTER in the 2^-64 case that the checksum comes out 0 (the
     *     caller may then re-encode a patched block at another level and retry)
     */
    public static Footer patchBlockIndex(SegmentHeader original, List<BlockIndexEntry> entries, byte[] tail,
                                         long footerOffset) {
        if (entries.size() != original.blockCount()) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, "patch changes the block count");
        }
        BlockIndex index = new BlockIndex(entries);
        byte[] footer = new byte[index.serializedSize() + tail.length];
        int p = index.writeTo(footer, 0);
        BlockIndex.parse(footer, 0, p, entries.size(), footerOffset);
        System.arraycopy(tail, 0, footer, p, tail.length);
        long shift = footerOffset + p - original.didBloomOffset();
        SegmentHeader h = new SegmentHeader(0, SegmentHeader.VERSION, original.blockCount(), original.eventCount(),
                original.uniqueDidCount(), original.minSeq(), original.maxSeq(), original.minWitnessedAt(),
                original.maxWitnessedAt(), footerOffset, original.didBloomOffset() + shift,
                original.blockDidBloomOffset() + shift, original.collectionIndexOffset() + shift, footerOffset);
        Footer f = finish(h, footer);
        if (f.header().checksum() == 0) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, "patched segment checksum is 0");
        }
        return f;
    }
}
