package jetstream.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Executor;

import org.jboss.logging.Logger;

import jetstream.atproto.DecodeException;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import jetstream.feed.Vacancy;
import jetstream.feed.VacancyFile;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/**
 * Follows the ingester's readable-log feed into the ring: renders each event once (both wires),
 * tracks the durable watermark (pinning), registers vacancies for cold replay, and passes on the
 * lifecycle phase and the steady writer's state. It first subscribes from seq 1 and, told the log's
 * floor, from that floor, so the ring starts as warm as the ingester's log; reconnects resume after
 * the last event (the feed client's own rule), and when that event has fallen below the log's floor
 * the ring restarts at the floor so subscribers read the gap from segments.
 */
public final class FeedFollower implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(FeedFollower.class);

    /** What the rest of the gateway learns from the feed besides events. */
    public interface State {
        void phase(String stored);

        void writerRunning(boolean running);

        void connected(boolean connected);
    }

    private final FeedClient.Options options;
    private final Ring ring;
    private final VacancySet vacancies;
    private final SegmentCatalog catalog;
    private final Executor background;
    private final State state;
    private final Runnable encodeError;
    private final EventEncoder encoder = new EventEncoder(true);
    private volatile FeedClient client;
    private volatile boolean closed;
    private boolean everConnected;

    public FeedFollower(Path socket, Ring ring, VacancySet vacancies, SegmentCatalog catalog, Executor background,
                        State state, Runnable encodeError) {
        this(FeedClient.Options.defaults(socket), ring, vacancies, catalog, background, state, encodeError);
    }

    public FeedFollower(FeedClient.Options options, Ring ring, VacancySet vacancies, SegmentCatalog catalog,
                        Executor background, State state, Runnable encodeError) {
        this.options = options;
        this.ring = ring;
        this.vacancies = vacancies;
        this.catalog = catalog;
        this.background = background;
        this.state = state;
        this.encodeError = encodeError;
    }

    /** Loads the registered vacancies from {@code data/vacancies.bin} and starts following. */
    public void start(Path dataDir) {
        try {
            for (Vacancy v : VacancyFile.load(dataDir)) {
                vacancies.add(v.start(), v.end() - 1);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + VacancyFile.path(dataDir), e);
        }
        follow(1);
    }

    private void follow(long fromSeq) {
        try {
            client = FeedClient.start(options, fromSeq, new Listener());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the feed client on " + options.socket(), e);
        }
    }

    public FeedClient client() {
        return client;
    }

    private final class Listener implements FeedClient.Listener {
        @Override
        public void onConnected(FeedFrame.Subscribed s) {
            if (!everConnected) {
                ring.reset(s.startSeq(), s.durableSeq());
                everConnected = true;
            } else {
                // Events above the durable watermark that a restarted ingester no longer has are gone
                // (their seqs become vacancies); stop serving them.
                ring.truncateAbove(s.durableSeq());
                ring.setDurable(s.durableSeq());
            }
            state.connected(true);
            // Seals and rewrites announced while disconnected were missed.
            refreshCatalog();
        }

        @Override
        public void onTooOld(FeedFrame.TooOld t) {
            if (!closed) {
                if (everConnected) {
                    // The seqs from the ring's tip up to the floor are durable and only in segment files now
                    // (a restarted ingester's log starts at its durable frontier; a lagging reader's position
                    // was evicted). The ring cannot hold a gap, so it restarts at the floor on the next
                    // SUBSCRIBED and subscribers below it replay the gap cold.
                    LOG.infof("feed log floor %d is above the ring's tip %d: subscribers replay the gap from segments",
                            t.floorSeq(), ring.tip());
                    everConnected = false;
                }
                follow(t.floorSeq());
            }
        }

        @Override
        public void onDisconnected(Exception cause) {
            LOG.warnf("feed disconnected: %s", cause.getMessage());
            state.connected(false);
        }

        @Override
        public void onFrame(FeedFrame f) {
            if (f instanceof FeedFrame.Event e) {
                event(e);
            } else if (f instanceof FeedFrame.Watermark w) {
                ring.setDurable(w.durableSeq());
            } else if (f instanceof FeedFrame.VacancyNotice v) {
                vacancies.add(v.vacancy().start(), v.vacancy().end() - 1);
            } else if (f instanceof FeedFrame.Phase p) {
                state.phase(p.phase().stored());
            } else if (f instanceof FeedFrame.WriterRunning w) {
                state.writerRunning(w.running());
            } else if (f instanceof FeedFrame.SegmentSealed || f instanceof FeedFrame.SegmentRewritten) {
                refreshCatalog();
            }
        }
    }

    /** Rescans the segment catalog on the background pool (it reads every header: never on the feed thread). */
    private void refreshCatalog() {
        background.execute(() -> {
            try {
                catalog.refresh();
            } catch (RuntimeException ex) {
                LOG.errorf(ex, "segment catalog refresh failed");
            }
        });
    }

    private void event(FeedFrame.Event e) {
        GatewayEvent g;
        try {
            g = encoder.encode(e.seq(), e.witnessedAt(), jetstream.wire.WireEvent.displayTime(e.witnessedAt(), e.indexedAt()), e.kind(),
                    new String(e.did(), StandardCharsets.UTF_8), new String(e.collection(), StandardCharsets.UTF_8),
                    new String(e.rkey(), StandardCharsets.UTF_8), new String(e.rev(), StandardCharsets.UTF_8),
                    e.payload(), 0, e.payload().length);
        } catch (DecodeException ex) {
            encodeError.run();
            ring.advanceTip(e.seq() + 1);
            return;
        }
        ring.append(g);
        ring.publish();
    }

    @Override
    public void close() {
        closed = true;
        FeedClient c = client;
        if (c != null) {
            c.close();
        }
    }

    /** The UNIX socket {@code <data-dir>/run/feed.sock}, or the ingester's TCP feed when {@code JETSTREAM_FEED_ADDR} is set. */
    static FeedClient.Options options(GatewayConfig config, Path dataDir) {
        String addr = config.feedAddr().orElse("");
        if (addr.isBlank()) {
            return FeedClient.Options.defaults(dataDir.resolve("run").resolve("feed.sock"));
        }
        int colon = addr.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalStateException("JETSTREAM_FEED_ADDR '" + addr + "' is not host:port");
        }
        try {
            byte[] secret = jetstream.feed.FeedAuth.loadSecret(config.feedSecret().orElse(""), config.feedSecretFile().orElse(""));
            if (secret == null) {
                throw new IllegalStateException("JETSTREAM_FEED_ADDR needs JETSTREAM_FEED_SECRET or JETSTREAM_FEED_SECRET_FILE");
            }
            String ca = config.feedTlsCa().orElse("");
            javax.net.ssl.SSLContext tls = ca.isBlank() ? null : jetstream.feed.FeedTls.client(Path.of(ca));
            String host = addr.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            LOG.infof("following the ingester's TCP feed at %s (%s)", addr, tls == null ? "plain" : "TLS");
            return FeedClient.Options.remote(new FeedClient.Remote(host, Integer.parseInt(addr.substring(colon + 1)),
                    secret, tls));
        } catch (java.io.IOException | java.security.GeneralSecurityException e) {
            throw new IllegalStateException("feed settings: " + e.getMessage(), e);
        }
    }
}
