package jetstream.segment;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The gloom v0.1.0 partitioned block bloom filter that every sealed footer stores (docs/segment-format.md):
 * 512-bit blocks, one block per key chosen from the high half of XXH3-128, k probes into k
 * pairwise-coprime partitions of the block. Serialized as a 21-byte header, the block words and a
 * CRC32C trailer. Sizing uses {@link StrictMath} so it is reproducible on every JVM.
 */
public final class GloomFilter {
    public static final int FORMAT_VERSION = 1;
    public static final int HEADER_SIZE = 21;
    public static final int TRAILER_SIZE = 4;
    public static final int BLOCK_BYTES = 64;
    public static final int MIN_K = 3;
    public static final int MAX_K = 17;
    /** Keeps the word array addressable by an int. */
    public static final long MAX_BLOCKS = (Integer.MAX_VALUE - HEADER_SIZE - TRAILER_SIZE) / BLOCK_BYTES;

    private static final double LN2_SQUARED = 0.4804530139182014;
    private static final Hasher128 XXH3_128 = Hashing.xxh3_128();

    /**
     * Partition sizes per k (docs/segment-format.md: DID blooms; the values are gloom v0.1.0's, bit for bit); the order defines
     * each partition's offset.
     */
    private static final int[][] PARTITIONS = {
        null, null, null,
        {167, 173, 172},
        {109, 127, 137, 139},
        {97, 101, 103, 109, 102},
        {61, 79, 83, 89, 97, 103},
        {61, 67, 71, 79, 83, 89, 62},
        {37, 47, 53, 61, 67, 71, 79, 97},
        {41, 43, 47, 53, 59, 67, 71, 73, 58},
        {31, 37, 41, 43, 47, 53, 59, 61, 67, 73},
        {29, 31, 37, 41, 43, 44, 47, 53, 59, 61, 67},
        {17, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 71},
        {17, 19, 23, 29, 31, 37, 41, 43, 47, 52, 53, 59, 61},
        {11, 13, 17, 19, 23, 29, 31, 37, 41, 47, 53, 59, 61, 71},
        {11, 13, 17, 19, 23, 28, 29, 31, 37, 41, 43, 47, 53, 59, 61},
        {5, 7, 11, 13, 17, 19, 23, 27, 29, 31, 37, 41, 43, 47, 53, 109},
        {3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 32, 37, 41, 43, 47, 53, 101},
    };

    /**
     * Per k, each partition size's multiplier for {@link #mod}: {@code 2^64 / size} rounded up, as an
     * unsigned long.
     */
    private static final long[][] PART_MAGIC = new long[PARTITIONS.length][];

    static {
        for (int k = MIN_K; k <= MAX_K; k++) {
            PART_MAGIC[k] = new long[k];
            for (int i = 0; i < k; i++) {
                PART_MAGIC[k][i] = magic(PARTITIONS[k][i]);
            }
        }
    }

    /** Filter dimensions chosen by {@link #optimalParams}. */
    public record Params(long numBlocks, int k) {
        /** Bytes of the serialized filter. */
        public long serializedSize() {
            return HEADER_SIZE + BLOCK_BYTES * numBlocks + TRAILER_SIZE;
        }
    }

    private final int k;
    private final int numBlocks;
    private final int[] partSize;
    private final int[] partOffset;
    private final long[] partMagic;
    private final long[] words;
    private long count;

    /** An empty filter sized for {@code expectedItems} at false-positive rate {@code fpRate}. */
    public static GloomFilter create(long expectedItems, double fpRate) {
        Params p = optimalParams(expectedItems, fpRate);
        return new GloomFilter(p.numBlocks(), p.k());
    }

    /** An empty filter with explicit dimensions. */
    public GloomFilter(long numBlocks, int k) {
        if (k < MIN_K || k > MAX_K) {
            throw new IllegalArgumentException("k must be 3..17, got " + k);
        }
        if (numBlocks < 1 || numBlocks > MAX_BLOCKS) {
            throw new IllegalArgumentException("numBlocks out of range: " + numBlocks);
        }
        this.k = k;
        this.numBlocks = (int) numBlocks;
        this.partSize = PARTITIONS[k];
        this.partMagic = PART_MAGIC[k];
        this.partOffset = new int[k];
        for (int i = 1; i < k; i++) {
            partOffset[i] = partOffset[i - 1] + partSize[i - 1];
        }
        this.words = new long[this.numBlocks * 8];
    }

    public int k() {
        return k;
    }

    public long numBlocks() {
        return numBlocks;
    }

    /** Number of {@code add} calls (stored in the serialization; informational). */
    public long count() {
        return count;
    }

    public void add(byte[] key) {
        add(key, 0, key.length);
    }

    public void add(byte[] key, int off, int len) {
        HashValue128 h = XXH3_128.hashBytesTo128Bits(key, off, len);
        add(h.getMostSignificantBits(), intraHash(h.getLeastSignificantBits()));
    }

    /** As {@link #add(byte[])} for a pre-hashed key: the seal hashes each DID once for every bloom level. */
    public void add(Probe p) {
        add(p.hi(), p.intra());
    }

    /** The {@link #mod} multiplier of divisor {@code d} (1 &lt; d &lt; 2^31): ceil(2^64 / d), unsigned. */
    static long magic(int d) {
        return Long.divideUnsigned(-1L, d) + 1;
    }

    /**
     * {@code Integer.remainderUnsigned(x, d)}, exactly, for every 32-bit {@code x} and {@code 1 < d < 2^31}
     * with {@code magic == magic(d)}: Lemire's "fastmod" (the remainder is the high word of
     * {@code (magic * x mod 2^64) * d}). On Java 17 {@code remainderUnsigned} is a 64-bit division; k
     * multiplies instead save about 15 % of a bloom add (BENCHMARKS.md, SealBench), and the per-block
     * blooms are most of a seal.
     */
    static int mod(int x, long magic, int d) {
        long low = magic * (x & 0xFFFFFFFFL);
        return (int) (Math.multiplyHigh(low, d) + ((low >> 63) & d));
    }

    /** Adds a key hashed to {@code hi} and {@code intra} as {@link Probe} reduces them. */
    void add(long hi, int x) {
        int base = blockIndex(hi) * 8;
        for (int i = 0; i < k; i++) {
            int pos = partOffset[i] + mod(x, partMagic[i], partSize[i]);
            words[base + (pos >>> 6)] |= 1L << (pos & 63);
        }
        count++;
    }

    public boolean mightContain(byte[] key) {
        return mightContain(key, 0, key.length);
    }

    /** False means the key was certainly never added. */
    public boolean mightContain(byte[] key, int off, int len) {
        HashValue128 h = XXH3_128.hashBytesTo128Bits(key, off, len);
        int base = blockIndex(h.getMostSignificantBits()) * 8;
        int x = intraHash(h.getLeastSignificantBits());
        for (int i = 0; i < k; i++) {
            int pos = partOffset[i] + mod(x, partMagic[i], partSize[i]);
            if ((words[base + (pos >>> 6)] & (1L << (pos & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * A key's XXH3-128 hash reduced to what probing needs, so a key looked up in many filters (the
     * planner's DIDs against every segment and block bloom) is hashed once.
     */
    public record Probe(long hi, int intra) {
        public static Probe of(byte[] key) {
            return of(key, 0, key.length);
        }

        public static Probe of(byte[] key, int off, int len) {
            HashValue128 h = XXH3_128.hashBytesTo128Bits(key, off, len);
            return new Probe(h.getMostSignificantBits(), intraHash(h.getLeastSignificantBits()));
        }
    }

    /** As {@link #mightContain(byte[])} for a pre-hashed key. */
    public boolean mightContain(Probe p) {
        int base = blockIndex(p.hi()) * 8;
        for (int i = 0; i < k; i++) {
            int pos = partOffset[i] + mod(p.intra(), partMagic[i], partSize[i]);
            if ((words[base + (pos >>> 6)] & (1L << (pos & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Probes a serialized filter in place, without parsing it into words: resident blooms stay in
     * their on-disk bytes. The bytes must have passed {@link #isValidSerialized} once.
     */
    public static boolean mightContainSerialized(byte[] src, int off, Probe p) {
        return mightContainSerialized(ByteBuffer.wrap(src), off, p);
    }

    /**
     * As {@link #mightContainSerialized(byte[], int, Probe)} over any buffer, e.g. a mapped footer:
     * only the one 64-byte block the key hashes to is read.
     */
    public static boolean mightContainSerialized(ByteBuffer src, int off, Probe p) {
        return mightContainSerialized(src, off, serializedK(src, off), serializedBlocks(src, off), p);
    }

    /** The k of a serialized filter (for callers that probe it often: {@link #mightContainSerialized(ByteBuffer, int, int, long, Probe)}). */
    public static int serializedK(ByteBuffer src, int off) {
        return src.get(off + 1) & 0xFF;
    }

    /** The block count of a serialized filter. */
    public static long serializedBlocks(ByteBuffer src, int off) {
        return src.order() == ByteOrder.LITTLE_ENDIAN ? src.getLong(off + 5) : Long.reverseBytes(src.getLong(off + 5));
    }

    /**
     * As {@link #mightContainSerialized(ByteBuffer, int, Probe)} with the filter's k and block count
     * already known, so a probe touches only the key's 64-byte block (one cache line), not the header.
     */
    public static boolean mightContainSerialized(ByteBuffer src, int off, int k, long nb, Probe p) {
        int[] parts = PARTITIONS[k];
        long block = Math.multiplyHigh(p.hi(), nb) + ((p.hi() >> 63) & nb);
        int base = off + HEADER_SIZE + (int) block * BLOCK_BYTES;
        int partStart = 0;
        for (int i = 0; i < k; i++) {
            int pos = partStart + Integer.remainderUnsigned(p.intra(), parts[i]);
            if ((src.get(base + (pos >>> 3)) & (1 << (pos & 7))) == 0) {
                return false;
            }
            partStart += parts[i];
        }
        return true;
    }

    /** True when {@code src[off, off+len)} would {@link #deserialize} without error. */
    public static boolean isValidSerialized(byte[] src, int off, int len) {
        return checkSerialized(ByteBuffer.wrap(src), off, len) == null;
    }

    /** As {@link #isValidSerialized(byte[], int, int)} over any buffer. */
    public static boolean isValidSerialized(ByteBuffer src, int off, int len) {
        return checkSerialized(src, off, len) == null;
    }

    /**
     * The framing checks of {@link #isValidSerialized} without the CRC pass (which reads every byte):
     * what a manifest can afford for every bloom at load time.
     */
    public static boolean isValidFraming(ByteBuffer src, int off, int len) {
        return checkFraming(src.duplicate().order(ByteOrder.LITTLE_ENDIAN), off, len) == null;
    }

    private static String checkFraming(ByteBuffer b, int off, int len) {
        if (len < HEADER_SIZE + TRAILER_SIZE) {
            return "bloom filter of " + len + " bytes is shorter than its header";
        }
        if (b.get(off) != FORMAT_VERSION) {
            return "bloom filter version " + (b.get(off) & 0xFF);
        }
        long k = b.getInt(off + 1) & 0xFFFFFFFFL;
        if (k < MIN_K || k > MAX_K) {
            return "bloom filter k " + k + " outside 3..17";
        }
        long nb = b.getLong(off + 5);
        if (nb < 1 || nb > MAX_BLOCKS) {
            return "bloom filter block count " + Long.toUnsignedString(nb);
        }
        if (len != HEADER_SIZE + BLOCK_BYTES * nb + TRAILER_SIZE) {
            return "bloom filter of " + len + " bytes, expected "
                    + (HEADER_SIZE + BLOCK_BYTES * nb + TRAILER_SIZE) + " for " + nb + " blocks";
        }
        return null;
    }

    /** The reason the bytes are not a valid filter, or null. */
    private static String checkSerialized(ByteBuffer src, int off, int len) {
        ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        String framing = checkFraming(b, off, len);
        if (framing != null) {
            return framing;
        }
        CRC32C crc = new CRC32C();
        crc.update(b.slice(off, len - TRAILER_SIZE));
        if ((int) crc.getValue() != b.getInt(off + len - TRAILER_SIZE)) {
            return "bloom filter CRC32C mismatch";
        }
        return null;
    }

    /** High 64 bits of the unsigned product {@code hi × numBlocks}: a bias-free range reduction. */
    private int blockIndex(long hi) {
        long nb = numBlocks;
        return (int) (Math.multiplyHigh(hi, nb) + ((hi >> 63) & nb));
    }

    private static int intraHash(long lo) {
        return (int) lo ^ (int) (lo >>> 32);
    }

    public int serializedSize() {
        return HEADER_SIZE + BLOCK_BYTES * numBlocks + TRAILER_SIZE;
    }

    public byte[] serialize() {
        byte[] out = new byte[serializedSize()];
        writeTo(out, 0);
        return out;
    }

    /** Writes {@link #serializedSize()} bytes at {@code dst[off]}. */
    public int writeTo(byte[] dst, int off) {
        dst[off] = FORMAT_VERSION;
        Le.put32(dst, off + 1, k);
        Le.put64(dst, off + 5, numBlocks);
        Le.put64(dst, off + 13, count);
        int p = off + HEADER_SIZE;
        for (long w : words) {
            Le.put64(dst, p, w);
            p += 8;
        }
        CRC32C crc = new CRC32C();
        crc.update(dst, off, p - off);
        Le.put32(dst, p, (int) crc.getValue());
        return p + TRAILER_SIZE - off;
    }

    /**
     * Parses exactly {@code len} bytes: version 1, k in 3..17, at least one block, the exact length
     * for its block count, and a matching CRC32C.
     *
     * @throws SegmentException CORRUPT_SEGMENT otherwise
     */
    public static GloomFilter deserialize(byte[] src, int off, int len) {
        String problem = checkSerialized(ByteBuffer.wrap(src), off, len);
        if (problem != null) {
            throw SegmentException.corrupt(problem);
        }
        long k = Le.u32(src, off + 1);
        long nb = Le.i64(src, off + 5);
        GloomFilter f = new GloomFilter(nb, (int) k);
        f.count = Le.i64(src, off + 13);
        int p = off + HEADER_SIZE;
        for (int i = 0; i < f.words.length; i++, p += 8) {
            f.words[i] = Le.i64(src, p);
        }
        return f;
    }

    /**
     * gloom's {@code OptimalParams}: start from the classic bits-per-item estimate, then grow the
     * block count in ~12.5 % steps (up to 4×) until the block-bloom false-positive estimate meets
     * {@code fpRate}, re-choosing k at each size.
     */
    public static Params optimalParams(long expectedItems, double fpRate) {
        long n = expectedItems <= 0 ? 1 : expectedItems;
        double fp = fpRate <= 0 ? 0.0001 : fpRate >= 1 ? 0.99 : fpRate;
        double bitsPerItem = -StrictMath.log(fp) / LN2_SQUARED;
        long baseBlocks = (long) StrictMath.ceil(n * bitsPerItem / 512);
        long maxBlocks = (long) StrictMath.ceil(baseBlocks * 4.0);
        long blocks = baseBlocks;
        int k = bestK(blocks, n);
        while (estimateFalsePositiveRate(blocks, k, n) > fp && blocks < maxBlocks) {
            blocks = Math.min(blocks + blocks / 8 + 1, maxBlocks);
            k = bestK(blocks, n);
        }
        return new Params(blocks, k);
    }

    private static int bestK(long blocks, long n) {
        int best = MIN_K;
        double bestFp = estimateFalsePositiveRate(blocks, MIN_K, n);
        for (int k = MIN_K + 1; k <= MAX_K; k++) {
            double fp = estimateFalsePositiveRate(blocks, k, n);
            if (fp < bestFp) {
                best = k;
                bestFp = fp;
            }
        }
        return best;
    }

    /**
     * Expected false-positive rate of {@code n} keys in {@code blocks} blocks with {@code k} probes:
     * the per-block rate averaged over a Poisson distribution of keys per block.
     */
    public static double estimateFalsePositiveRate(long blocks, int k, long n) {
        if (blocks == 0 || n == 0) {
            return 0;
        }
        double lambda = (double) n / (double) blocks;
        int[] parts = PARTITIONS[k];
        if (lambda > 10000) {
            return blockFalsePositiveRate(parts, lambda);
        }
        long maxJ = (long) StrictMath.floor(lambda + 10 * StrictMath.sqrt(lambda) + 20);
        long floorLambda = (long) StrictMath.floor(lambda);
        double logLambda = StrictMath.log(lambda);
        SizingTable.Row row = SizingTable.row(k, (int) maxJ);
        double sum = 0;
        for (int j = 0; j <= maxJ; j++) {
            double p = StrictMath.exp(-lambda + j * logLambda - row.logFactorial(j));
            if (p < 1e-15 && j > floorLambda) {
                break;
            }
            if (j > 0) {
                sum += p * row.blockRate(j);
            }
        }
        return sum;
    }

    /** Per-block false-positive rate of {@code keys} keys in one block partitioned as {@code parts}. */
    static double blockFalsePositiveRate(int[] parts, double keys) {
        double r = 1;
        for (int p : parts) {
            r *= 1 - StrictMath.pow(1 - 1.0 / p, keys);
        }
        return r;
    }

    static int[] partitions(int k) {
        return PARTITIONS[k];
    }
}
