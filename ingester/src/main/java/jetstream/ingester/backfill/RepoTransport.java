package jetstream.ingester.backfill;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.ByteBudget;
import org.jboss.logging.Logger;

/**
 * The getRepo path one backfill user (the engine, the failed-repo retrier, the exhausted-host
 * re-lister) downloads through: XRPC with deadlines and redirect checks, its own spool directory,
 * and CAR bodies held in heap against the in-flight byte budget, which the users of one ingester
 * share ({@link #budget}).
 */
final class RepoTransport {
    private static final Logger LOG = Logger.getLogger(RepoTransport.class);
    final SyncCalls xrpc;
    final CarSpool spool;
    final RepoFetcher fetcher;

    RepoTransport(BackfillSettings s, HttpClient http, MetaStore store, IngestMetrics metrics, Upstream upstream,
                  ByteBudget budget, String user) {
        HostnamePolicy policy = new HostnamePolicy(s.allowLoopback());
        this.spool = new CarSpool(budget, s.spoolThresholdBytes(), spoolDir(store, user),
                BackfillMetrics.of(metrics.registry()).spooledCars);
        this.xrpc = new SyncCalls(http, Duration.ofSeconds(60), Duration.ofMinutes(10),
                target -> redirectTargetAllowed(policy, upstream, target), spool, SyncCalls.keepAlive(http), s.maxCarBytes());
        this.fetcher = new RepoFetcher(xrpc, metrics, spool);
    }

    /**
     * The in-flight CAR budget ({@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES}, at most a quarter of this JVM's heap,
     * {@link BackfillSettings#inflightBytesFor}) for one ingester: create it once and hand it to every user, so
     * together they never hold more.
     */
    static ByteBudget budget(BackfillSettings s) {
        long heap = Runtime.getRuntime().maxMemory();
        long bytes = s.inflightBytesFor(heap);
        if (bytes < s.maxInflightBytes()) {
            LOG.infof("JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES=%d is over a quarter of the %d MiB heap: %d bytes are used",
                    s.maxInflightBytes(), heap >> 20, bytes);
        }
        return new ByteBudget(bytes);
    }

    /** {@code <data>/backfill-spool/<user>}: the data directory is the metadata store's parent. */
    static Path spoolDir(MetaStore store, String user) {
        return store.dir().toAbsolutePath().getParent().resolve("backfill-spool").resolve(user);
    }

    /** A redirect target must pass the same hostname rules as a roster host (the upstream itself excepted). */
    static boolean redirectTargetAllowed(HostnamePolicy policy, Upstream upstream, java.net.URI target) {
        String host = target.getHost().toLowerCase(java.util.Locale.ROOT);
        String authority = host + (target.getPort() < 0 ? "" : ":" + target.getPort());
        if (authority.equals(upstream.directHost())) {
            return true;
        }
        if (target.getPort() >= 0) {
            return false;
        }
        HostnamePolicy.Verdict v = policy.check(host);
        if (!v.accepted() && !(HostnamePolicy.SPECIAL_USE.equals(v.reason()) && upstream.routed(host))) {
            return false;
        }
        try {
            return upstream.routed(host) || policy.checkAddresses(java.net.InetAddress.getAllByName(host)) == null;
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }
}
