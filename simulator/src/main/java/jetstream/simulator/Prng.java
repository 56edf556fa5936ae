package jetstream.simulator;

/**
 * SplitMix64: a tiny seeded generator whose streams can be derived from (seed, labels) without
 * shared state, so any account's repository or any event can be regenerated on its own, in any
 * order, with the same result.
 */
final class Prng {
    private long state;

    Prng(long seed) {
        this.state = seed;
    }

    /** A stream determined by the seed and the labels only. */
    static Prng of(long seed, long... labels) {
        return new Prng(hash(seed, labels));
    }

    static long hash(long seed, long... labels) {
        long h = mix(seed ^ 0x6a09e667f3bcc909L);
        for (long l : labels) {
            h = mix(h ^ mix(l + 0x9e3779b97f4a7c15L));
        }
        return h;
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    long nextLong() {
        state += 0x9e3779b97f4a7c15L;
        return mix(state);
    }

    /** Uniform in [0, bound). */
    int nextInt(int bound) {
        return (int) Math.floorMod(nextLong() >>> 1, (long) bound);
    }

    long nextLong(long bound) {
        return Math.floorMod(nextLong() >>> 1, bound);
    }

    /** Uniform in [0, 1). */
    double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    boolean chance(double p) {
        return nextDouble() < p;
    }

    void nextBytes(byte[] b) {
        for (int i = 0; i < b.length; i += 8) {
            long v = nextLong();
            for (int j = 0; j < 8 && i + j < b.length; j++) {
                b[i + j] = (byte) (v >>> (8 * j));
            }
        }
    }
}
