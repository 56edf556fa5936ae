package jetstream.simulator;

/**
 * Fault knobs, all off by default. Each is a public field settable as a flag
 * ({@code --dead-hosts 1}) or environment variable ({@code SIM_DEAD_HOSTS=1}); the package
 * documentation says what a client sees for each.
 */
public final class Faults {
    /** listHosts also returns hostile hostnames (IP literals, localhost, private ranges, overlong names). */
    public boolean hostileHosts;
    /** The last n hosts are dead: their port refuses connections, Host-routed requests are reset. */
    public int deadHosts;
    /** Every n-th account's repo answers 404 RepoNotFound on getRepo/getLatestCommit although listRepos lists it (0: off). */
    public int notFoundEvery;
}
