package jetstream.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDictCompress;

/**
 * The two zstd dictionaries (docs/wire.md: Compression and dictionaries), shipped byte-identical as resources, and one
 * compression context per thread per wire: v1 uses the legacy dictionary at the default level, v2
 * the current dictionary at the fastest level; both with a 128 KiB window and content checksums.
 */
public final class Dictionaries {
    public static final String V1_RESOURCE = "zstd-dictionaries/legacy_subscribe.zdict";
    public static final String V2_RESOURCE = "zstd-dictionaries/subscribe_events_20260811.zdict";
    private static final int WINDOW_LOG = 17;

    private static final byte[] V1_BYTES = load(V1_RESOURCE);
    private static final byte[] V2_BYTES = load(V2_RESOURCE);
    private static final long V2_ID = dictId(V2_BYTES);
    private static final ZstdDictCompress V1_DICT = new ZstdDictCompress(V1_BYTES, 3);
    private static final ZstdDictCompress V2_DICT = new ZstdDictCompress(V2_BYTES, 1);

    private static final ThreadLocal<ZstdCompressCtx> V1_CTX = ThreadLocal.withInitial(() -> ctx(V1_DICT, 3));
    private static final ThreadLocal<ZstdCompressCtx> V2_CTX = ThreadLocal.withInitial(() -> ctx(V2_DICT, 1));

    private Dictionaries() {}

    /** The v2 dictionary's bytes (a copy), as getZstdDictionary serves them. */
    public static byte[] v2Bytes() {
        return V2_BYTES.clone();
    }

    public static byte[] v1Bytes() {
        return V1_BYTES.clone();
    }

    /** The current v2 dictionary ID, read from bytes 4..7 (LE) of the dictionary. */
    public static long v2Id() {
        return V2_ID;
    }

    /** One zstd frame of {@code src} with the wire's dictionary. Thread-safe (per-thread contexts). */
    public static byte[] compress(Wire wire, byte[] src) {
        return (wire == Wire.V1 ? V1_CTX : V2_CTX).get().compress(src);
    }

    private static ZstdCompressCtx ctx(ZstdDictCompress dict, int level) {
        ZstdCompressCtx c = new ZstdCompressCtx();
        c.setLevel(level);
        c.setChecksum(true);
        c.setWindowLog(WINDOW_LOG);
        c.setDictID(true);
        c.loadDict(dict);
        return c;
    }

    static long dictId(byte[] dict) {
        return (dict[4] & 0xFFL) | (dict[5] & 0xFFL) << 8 | (dict[6] & 0xFFL) << 16 | (dict[7] & 0xFFL) << 24;
    }

    private static byte[] load(String name) {
        try (InputStream in = Dictionaries.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("zstd dictionary resource " + name + " is missing from the build");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
