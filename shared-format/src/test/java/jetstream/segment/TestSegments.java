package jetstream.segment;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;

/** Assembles sealed segment bytes in memory the way a seal lays out a file. */
final class TestSegments {
    private TestSegments() {}

    /** Seals the given block bodies (compressed with {@code zstd}) into one file image. */
    static byte[] seal(ZstdFrames zstd, List<byte[]> bodies) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SegmentHeader.activeHeaderBytes());
        FooterBuilder fb = new FooterBuilder(zstd);
        BlockView view = new BlockView();
        for (byte[] body : bodies) {
            byte[] frame = zstd.compress(body, 0, body.length);
            long offset = out.size();
            byte[] prefix = new byte[8];
            Le.put64(prefix, 0, frame.length);
            out.writeBytes(prefix);
            out.writeBytes(frame);
            fb.addBlock(offset, frame.length, view.decode(body, 0, body.length));
        }
        Footer footer = fb.build(out.size());
        out.writeBytes(footer.footerBytes());
        byte[] file = out.toByteArray();
        System.arraycopy(footer.headerBytes(), 0, file, 0, SegmentHeader.SIZE);
        return file;
    }

    static SegmentReader open(byte[] file) {
        return SegmentReader.open(ByteBuffer.wrap(file), true);
    }
}
