package jetstream.segment;

import java.util.BitSet;

/**
 * The blocks of one sealed segment as cold replay and cursor resolution read them: a mapped local
 * file ({@link SegmentReader}) or the archive-server's HTTP ({@code jetstream.replay.ArchiveSegment}).
 * Implementations are safe to share between threads (callers bring their own view and zstd context)
 * and may block on I/O: call them off any event loop.
 */
public interface SegmentBlocks {
    /** The block index (per-block offsets, sizes, seq and time envelopes). */
    BlockIndex blockIndex();

    /** Decodes block {@code block} into {@code view} (reused), checked against its index entry. */
    BlockView block(int block, BlockView view, ZstdFrames zstd);

    /** The blocks that may hold rows of {@code did}; only called when {@link #skipsBlocks()}. */
    BitSet blocksForDid(byte[] did);

    /** The collection index; only called when {@link #skipsBlocks()}. */
    CollectionIndex collectionIndex();

    /** False when this source has no DID blooms or collection index at hand: every block is read. */
    default boolean skipsBlocks() {
        return true;
    }
}
