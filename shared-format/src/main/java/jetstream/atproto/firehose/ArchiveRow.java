package jetstream.atproto.firehose;

/**
 * One row to archive, before the writer assigns its seq and witnessed time (docs/segment-format.md). Strings
 * are empty rather than null when a kind has no such field; {@code payload} aliases the frame.
 */
public record ArchiveRow(int kind, String did, String collection, String rkey, String rev, ByteSlice payload) {
    public static final int KIND_CREATE = 1;
    public static final int KIND_UPDATE = 2;
    public static final int KIND_DELETE = 3;
    public static final int KIND_IDENTITY = 4;
    public static final int KIND_ACCOUNT = 5;
    public static final int KIND_SYNC = 6;
    /** A record of the authoritative repo after a resync (Sync 1.1); shown as a create on v2, skipped on v1. */
    public static final int KIND_CREATE_RESYNC = 7;

    /**
     * Segment column widths (docs/segment-format.md) that valid input can exceed. A valid DID (at most 2048
     * chars) always fits the 65,535-byte DID column and a TID rev the 255-byte rev column.
     */
    public static final int MAX_COLLECTION_BYTES = 255;
    public static final int MAX_RKEY_BYTES = 255;

    public ArchiveRow {
        if (kind < KIND_CREATE || kind > KIND_CREATE_RESYNC) {
            throw new IllegalArgumentException("kind " + kind + " outside 1..7");
        }
    }

    /** Kinds 1, 2, 3 and 7: rows produced by record operations. */
    public static boolean isCommitKind(int kind) {
        return kind == KIND_CREATE || kind == KIND_UPDATE || kind == KIND_DELETE || kind == KIND_CREATE_RESYNC;
    }
}
