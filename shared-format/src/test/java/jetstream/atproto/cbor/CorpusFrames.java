package jetstream.atproto.cbor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jetstream.testing.Vectors;

/** The relay frames of {@code jetstream-corpus/relay_frames.bin}: {@code [u32 LE length][frame bytes]...}. */
public final class CorpusFrames {
    private CorpusFrames() {}

    public static List<byte[]> load() {
        byte[] all = Vectors.bytes("jetstream-corpus/relay_frames.bin");
        List<byte[]> frames = new ArrayList<>();
        int p = 0;
        while (p < all.length) {
            int len = (all[p] & 0xff) | (all[p + 1] & 0xff) << 8 | (all[p + 2] & 0xff) << 16 | (all[p + 3] & 0xff) << 24;
            p += 4;
            frames.add(Arrays.copyOfRange(all, p, p + len));
            p += len;
        }
        if (p != all.length || frames.isEmpty()) {
            throw new IllegalStateException("relay_frames.bin framing broken");
        }
        return frames;
    }
}
