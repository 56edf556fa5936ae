package jetstream.simulator;

import java.io.IOException;

/**
 * The per-host fault knobs of {@link Faults} as a PDS applies them to requests: dead, banned, idle
 * and slow hosts (assigned from the last host down), error bursts and per-second rate limits.
 */
final class HostFaults {
    private final SimConfig cfg;
    private final long[] requests;
    private final long[] windowStart;
    private final int[] windowCount;

    HostFaults(SimConfig cfg) {
        this.cfg = cfg;
        this.requests = new long[cfg.hosts];
        this.windowStart = new long[cfg.hosts];
        this.windowCount = new int[cfg.hosts];
    }

    boolean dead(int host) {
        return host >= cfg.hosts - cfg.faults.deadHosts;
    }

    /** What listHosts says about a host (fault knobs assign statuses from the last host down). */
    String hostStatus(int host) {
        Faults f = cfg.faults;
        int fromEnd = cfg.hosts - 1 - host;
        if (fromEnd < f.deadHosts) {
            return "offline";
        }
        fromEnd -= f.deadHosts;
        if (fromEnd < f.bannedHosts) {
            return "banned";
        }
        fromEnd -= f.bannedHosts;
        return fromEnd < f.idleHosts ? "idle" : "active";
    }

    private boolean slow(int host) {
        Faults f = cfg.faults;
        int fromEnd = cfg.hosts - 1 - host - f.deadHosts - f.bannedHosts - f.idleHosts;
        return fromEnd >= 0 && fromEnd < f.slowHosts;
    }

    /**
     * Applies the per-host request faults; true when the request was answered (or dropped) by one.
     */
    boolean hostFault(Exchange ex, int host) throws IOException {
        Faults f = cfg.faults;
        if (slow(host)) {
            try {
                Thread.sleep(f.slowMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ex.abort();
                return true;
            }
        }
        long n;
        synchronized (requests) {
            n = requests[host]++;
        }
        if (f.errorBurstEvery > 0 && n % f.errorBurstEvery < f.errorBurstLength) {
            ex.send(f.errorStatus, "application/json", Json.error(f.errorStatus >= 500 ? "InternalServerError" : "Error",
                    "injected error burst"));
            return true;
        }
        if (f.rateLimit > 0) {
            long second = System.currentTimeMillis() / 1000;
            int used;
            synchronized (requests) {
                if (windowStart[host] != second) {
                    windowStart[host] = second;
                    windowCount[host] = 0;
                }
                used = ++windowCount[host];
            }
            if (used > f.rateLimit) {
                ex.send(429, "application/json", Json.error("RateLimitExceeded", "Rate Limit Exceeded"),
                        "ratelimit-limit", Integer.toString(f.rateLimit),
                        "ratelimit-remaining", "0",
                        "ratelimit-reset", Long.toString(second + 1),
                        "ratelimit-policy", f.rateLimit + ";w=1");
                return true;
            }
        }
        return false;
    }
}
