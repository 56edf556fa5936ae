package jetstream.simulator;

/**
 * Fault knobs, all off by default. Each is a public field settable as a flag
 * ({@code --dead-hosts 1}) or environment variable ({@code SIM_DEAD_HOSTS=1}); the package
 * documentation says what a client sees for each. Host-selecting knobs count from the last host
 * down: dead hosts are the last {@code deadHosts}, banned ones the {@code bannedHosts} before
 * them, then idle, then slow ones; host 0 (the biggest) is affected last.
 */
public final class Faults {
    /** listHosts also returns hostile hostnames (IP literals, localhost, private ranges, overlong names). */
    public boolean hostileHosts;
    /** Dead hosts: listed as offline; their port refuses connections and Host-routed requests are reset. */
    public int deadHosts;
    /** Hosts listHosts reports as banned (they still answer; a client must not use them). */
    public int bannedHosts;
    /** Hosts listHosts reports as idle (they answer normally). */
    public int idleHosts;
    /** Slow hosts: every response is delayed by {@link #slowMillis}. */
    public int slowHosts;
    public int slowMillis = 2000;
    /** Per PDS, of every n requests the first {@link #errorBurstLength} answer {@link #errorStatus} (0: off). */
    public int errorBurstEvery;
    public int errorBurstLength = 3;
    public int errorStatus = 503;
    /** Requests per second each PDS accepts before answering 429 with ratelimit-* headers (0: unlimited). */
    public int rateLimit;
    /** Every n-th account's repo answers 404 RepoNotFound on getRepo/getLatestCommit although listRepos lists it. */
    public int notFoundEvery;
    /** Every n-th account's getRepo is a well-formed HTTP response whose CAR stops mid-block. */
    public int truncateCarEvery;
    /** Every n-th account's getRepo declares the full Content-Length, sends half and resets the connection. */
    public int abortCarEvery;
    /** Every n-th account's getRepo has bytes flipped inside a record block (CID mismatch). */
    public int corruptCarEvery;
    /** The relay resets each subscriber's connection (no close frame) after this many frames (0: never). */
    public int disconnectEvery;
    /** Before every event whose seq is a multiple of n, the relay sends a malformed frame (cycling four kinds). */
    public int malformedFrameEvery;
    /** A commit event whose seq is a multiple of n carries a rev that is not a TID (signed; listed in the ledger). */
    public int invalidRevEvery;
    /** A commit event whose seq is a multiple of n creates a record under an invalid collection NSID. */
    public int invalidCollectionEvery;
    /** A commit event whose seq is a multiple of n creates a record under an invalid (overlong) record key. */
    public int invalidRkeyEvery;

    /** The PLC directory answers 503 to every request (an outage); settable while running. */
    public volatile boolean plcDown;
    /** Every PLC answer comes this many milliseconds late (0: off); settable while running. */
    public volatile int plcSlowMillis;
    /** Every {@code #identity} event rotates its account's signing key (the PLC serves the new one from then on). */
    public boolean rotateKeyOnIdentity;
    /** getRepo answers 503 for every repository (a PDS outage); settable while running. */
    public volatile boolean getRepoDown;
    /** getRepo answers 404 RepoNotFound for every repository; settable while running. */
    public volatile boolean getRepoNotFound;
    /** getRepo sends its headers and then one byte a second, forever; settable while running. */
    public volatile boolean getRepoTrickle;
    /** getRepo answers 200 with a body of this many garbage bytes, no Content-Length (0: off); settable while running. */
    public volatile long getRepoHugeBytes;
    /** Before every event whose seq is a multiple of n, the relay sends a message of 17 MiB (over any sane cap). */
    public int oversizeFrameEvery;
    /**
     * Before every event whose seq is a multiple of n, the relay sends a decodable {@code #commit}
     * that repeats the previous seq, with an op action {@code frob} (no valid commit has one).
     */
    public int poisonFrameEvery;
    /**
     * Every did:web document ({@link SimConfig#didWebEvery}) names a key that is not the account's (a
     * host serving a wrong or stale key): its commits fail their signature; settable while running.
     */
    public volatile boolean didWebWrongKey;

    static boolean every(int n, long x) {
        return n > 0 && x % n == 0;
    }
}
