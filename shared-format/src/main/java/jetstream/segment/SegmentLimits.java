package jetstream.segment;

/** Fixed sizes and the decoder safety limits of the segment format (docs/segment-format.md). */
public final class SegmentLimits {
    private SegmentLimits() {}

    /** The fixed header; the block region always starts here. */
    public static final int HEADER_SIZE = 256;
    /** Length prefix in front of every block frame. */
    public static final int FRAME_PREFIX_SIZE = 8;
    /** Rows per block the live writer flushes at. */
    public static final int DEFAULT_EVENTS_PER_BLOCK = 4096;
    /** Size at which the active segment is sealed (measured as file size − 256). */
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 256L << 20;

    public static final int MAX_EVENTS_PER_BLOCK = 1 << 18;
    /** Cap on the decompressed size of any zstd frame (blocks and the collection index body). */
    public static final int MAX_FRAME_CONTENT_SIZE = 1 << 30;
    public static final int MAX_BLOCK_COUNT = 1 << 20;
    public static final int MAX_COLLECTION_COUNT = 1 << 20;

    public static final int MAX_DID_LENGTH = 0xFFFF;
    public static final int MAX_COLLECTION_LENGTH = 0xFF;
    public static final int MAX_RKEY_LENGTH = 0xFF;
    public static final int MAX_REV_LENGTH = 0xFF;
}
