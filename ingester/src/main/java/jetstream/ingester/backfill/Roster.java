package jetstream.ingester.backfill;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The eligible roster and the hosts of this engine: {@code listHosts} paginated, each hostname
 * checked by the {@link HostnamePolicy}, banned hosts excluded, the cap applied, every eligible
 * host's row upserted. In direct-PDS mode (configured, or detected when the upstream answers
 * {@code listHosts} like a PDS), the upstream alone.
 */
final class Roster {
    private static final Logger LOG = Logger.getLogger(Roster.class);

    private final BackfillSettings settings;
    private final MetaStore store;
    private final SteadyWriter writer;
    private final BackfillMetrics bm;
    private final Upstream upstream;
    private final HostnamePolicy policy;
    private final SyncCalls xrpc;
    private final RunFlags flags;
    private final Map<String, HostRun> hosts = new ConcurrentHashMap<>();
    private volatile boolean direct;

    Roster(BackfillSettings settings, MetaStore store, SteadyWriter writer, BackfillMetrics bm, Upstream upstream,
           HostnamePolicy policy, SyncCalls xrpc, RunFlags flags) {
        this.settings = settings;
        this.store = store;
        this.writer = writer;
        this.bm = bm;
        this.upstream = upstream;
        this.policy = policy;
        this.xrpc = xrpc;
        this.flags = flags;
        this.direct = settings.upstreamMode() == BackfillSettings.UpstreamMode.PDS;
    }

    /** Whether the roster is the upstream PDS alone (configured, or detected from listHosts). */
    boolean direct() {
        return direct;
    }

    HostRun get(String hostname) {
        return hosts.get(hostname);
    }

    Collection<HostRun> hosts() {
        return hosts.values();
    }

    /**
     * Whether a first listHosts answer says the upstream is a PDS, not a relay: an unknown method
     * (501 / MethodNotImplemented), or 401 as the reference PDS answers it (it proxies methods it
     * does not serve and asks for auth; a relay serves listHosts publicly).
     */
    static boolean answersLikeAPds(SyncCalls.Answer a) {
        return a.outcome() == SyncCalls.Outcome.NOT_IMPLEMENTED
                || a.outcome() == SyncCalls.Outcome.BAD_RESPONSE && a.error() != null && a.error().startsWith("http 401");
    }

    /** Lists the eligible roster now, upserting each host's row (staged through the writer). */
    List<String> list() throws InterruptedException {
        java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
        Map<String, byte[]> stage = new LinkedHashMap<>();
        Instant now = Instant.now();
        if (!direct) {
            String cursor = "";
            long backoff = 500;
            while (!flags.closed) {
                SyncCalls.Answer a = xrpc.listHosts(upstream.url(), cursor);
                SyncCalls.HostPage page = a.outcome() == SyncCalls.Outcome.OK ? SyncCalls.parseHosts(a.body()) : null;
                if (answersLikeAPds(a) && out.isEmpty() && cursor.isEmpty()) {
                    if (settings.upstreamMode() == BackfillSettings.UpstreamMode.RELAY) {
                        throw new IllegalStateException("the upstream " + upstream.url() + " does not implement"
                                + " com.atproto.sync.listHosts, and JETSTREAM_UPSTREAM_MODE=relay: set it to pds (or auto)"
                                + " to backfill this single PDS");
                    }
                    LOG.infof("backfill: %s answers listHosts like a PDS: direct-PDS mode, the upstream is"
                            + " the only host", upstream.url());
                    direct = true;
                    break;
                }
                if (page == null) {
                    LOG.warnf("backfill: listHosts on %s failed (%s), retrying in %d ms", upstream.url(),
                            a.error() == null ? "malformed page" : a.error(), backoff);
                    Thread.sleep(backoff);
                    backoff = Math.min(backoff * 2, 30_000);
                    continue;
                }
                for (SyncCalls.Host host : page.hosts()) {
                    String name = eligible(host);
                    if (name == null || out.contains(name)) {
                        continue;
                    }
                    if (out.size() >= settings.maxHosts()) {
                        bm.rosterCapHits.increment();
                        break;
                    }
                    out.add(name);
                    upsert(name, host, now, stage);
                }
                if (page.cursor() == null || page.cursor().isEmpty() || page.cursor().equals(cursor)
                        || out.size() >= settings.maxHosts()) {
                    break;
                }
                cursor = page.cursor();
            }
        }
        if (direct) {
            out.clear();
            out.add(upstream.directHost());
            upsert(upstream.directHost(), new SyncCalls.Host(upstream.directHost(), "active", 0, 0), now, stage);
        }
        if (!stage.isEmpty()) {
            writer.submit(new SteadyWriter.Submission(List.of(), stage, null));
        }
        return new ArrayList<>(out);
    }

    /** The normalised hostname when this listHosts entry may be crawled, else null (rejections counted). */
    private String eligible(SyncCalls.Host host) {
        HostnamePolicy.Verdict v = policy.check(host.hostname());
        String name = v.hostname();
        if (!v.accepted()) {
            String lower = host.hostname() == null ? "" : host.hostname().toLowerCase(java.util.Locale.ROOT);
            // a special-use name (the simulator's *.test) is dialled only when the dev host map routes it
            if (HostnamePolicy.SPECIAL_USE.equals(v.reason()) && upstream.routed(lower)) {
                name = lower;
            } else {
                bm.hostnameRejected(v.reason());
                return null;
            }
        }
        if ("banned".equalsIgnoreCase(host.status())) {
            return null;
        }
        return name;
    }

    private void upsert(String name, SyncCalls.Host host, Instant now, Map<String, byte[]> stage) {
        HostRun run = hosts.computeIfAbsent(name, n -> {
            byte[] stored = store.get(PdsHost.key(n));
            PdsHost row = stored != null ? PdsHost.parse(n, stored) : new PdsHost(n).firstSeenAt(now).state(PdsHost.PENDING);
            return new HostRun(n, upstream.baseFor(n), row, settings.hostWorkersMax());
        });
        synchronized (run) {
            run.row.relayStatus(host.status()).relayAccounts(host.accountCount()).seq(host.seq()).updatedAt(now);
            stage.put(run.row.key(), run.row.toJson());
        }
    }
}
