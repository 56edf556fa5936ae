package jetstream.segment;

import java.nio.ByteBuffer;
import java.util.Arrays;

/** Test helper: a sealed file image's DID census, and the image without it or with another one. */
public final class CensusFiles {
    private CensusFiles() {}

    /** The census bytes of a sealed file image; null when it has none. */
    public static byte[] census(byte[] file) {
        FooterTail tail = tail(file);
        return tail.censusAt() < 0 ? null : Arrays.copyOfRange(file, tail.censusAt(), tail.censusAt() + tail.censusLength());
    }

    /** The image without its census (what an older seal, or one hit by a probe collision, wrote), checksum recomputed. */
    public static byte[] withoutCensus(byte[] file) {
        return withCensus(file, new byte[0]);
    }

    /** The image with {@code census} in place of its census, checksum recomputed. */
    public static byte[] withCensus(byte[] file, byte[] census) {
        FooterTail tail = tail(file);
        if (tail.censusAt() < 0) {
            throw new IllegalArgumentException("the file has no census");
        }
        byte[] out = Arrays.copyOf(file, tail.censusAt() + census.length);
        System.arraycopy(census, 0, out, tail.censusAt(), census.length);
        return resummed(out);
    }

    /** The image with its checksum recomputed over its current footer bytes. */
    public static byte[] resummed(byte[] out) {
        SegmentHeader h = SegmentHeader.parseSealed(out, 0).withChecksum(0);
        int footerAt = (int) h.footerOffset();
        long checksum = SegmentHeader.computeChecksum(h.toBytes(), out, footerAt, out.length - footerAt);
        System.arraycopy(h.withChecksum(checksum).toBytes(), 0, out, 0, SegmentHeader.SIZE);
        return out;
    }

    static FooterTail tail(byte[] file) {
        SegmentHeader h = SegmentHeader.parseSealed(file, 0);
        return FooterTail.find(ByteBuffer.wrap(file), (int) h.collectionIndexOffset(), file.length);
    }
}
