package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import jetstream.segment.BlockFraming;
import jetstream.segment.BlockView;
import jetstream.segment.ZstdFrames;

/** Test helper: decodes the block region of a segment file (active or sealed) frame by frame. */
final class Scan {
    private Scan() {}

    /** Seqs of every row in the blocks in {@code [256, limit)}, each row checked against {@link Rows}. */
    static List<Long> seqs(Path file, long limit) throws IOException {
        List<Long> out = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); ZstdFrames z = new ZstdFrames()) {
            BlockFraming.Scan w = BlockFraming.scan(ch, limit < 0 ? ch.size() : limit);
            BlockView v = new BlockView();
            for (int i = 0; i < w.blockCount(); i++) {
                byte[] frame = new byte[(int) w.frameLengths()[i]];
                Channels.readFully(ch, ByteBuffer.wrap(frame), w.offsets()[i] + 8);
                v.decodeFrame(z, frame, 0, frame.length, -1);
                for (int r = 0; r < v.size(); r++) {
                    Rows.check(v, r);
                    out.add(v.seq(r));
                }
            }
        }
        return out;
    }

    static List<Long> seqs(Path activeFile) throws IOException {
        return seqs(activeFile, -1);
    }

    static List<Long> range(long from, long toInclusive) {
        List<Long> out = new ArrayList<>();
        for (long s = from; s <= toInclusive; s++) {
            out.add(s);
        }
        return out;
    }
}
