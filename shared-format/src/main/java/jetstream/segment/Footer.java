package jetstream.segment;

/**
 * A finished footer and the finalized header that goes with it: write {@link #footerBytes()} at
 * {@code header().footerOffset()}, make it durable, then write {@link #headerBytes()} at offset 0.
 */
public record Footer(SegmentHeader header, byte[] headerBytes, byte[] footerBytes) {

    /** File size once both are written. */
    public long fileSize() {
        return header.footerOffset() + footerBytes.length;
    }
}
