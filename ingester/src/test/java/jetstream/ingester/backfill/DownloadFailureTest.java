package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A download that throws must not leave its repository outstanding. Before, the pool's thread died with the
 * exception, the job's page never settled and the host's crawl waited for it forever: a bootstrap of 970,023
 * repos at -Xmx1g whose downloads ran out of heap nine times hung at 970,014, the process up and idle. Here
 * one repository's getRepo throws: a defect (a RuntimeException) fails that repo with its reason and the run
 * completes; an Error ends the run loudly.
 */
@Tag("component")
class DownloadFailureTest {

    @Test
    @Timeout(120)
    void aDownloadThatThrowsFailsItsRepoAndTheRunCompletes(@TempDir Path dir) throws Exception {
        SimConfig cfg = config();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(dir.resolve("data"))) {
            String victim = sim.truth().dids().get(7);
            IngestMetrics metrics = BackfillFixture.metrics();
            try (SteadyWriter writer = BackfillFixture.openWriter(dir.resolve("data"), store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()),
                         new Throwing(victim, () -> new IllegalStateException("injected defect")), store, writer, metrics,
                         BackfillFixture.route(sim))) {
                engine.run(BackfillEngine.Mode.FULL);
                writer.flushDurable(java.util.Map.of());
                assertEquals(cfg.accounts, engine.progress().reposDone(), "every repo terminal");
            }
            RepoStatus row = RepoStatus.parse(victim, store.get(RepoStatus.key(victim)));
            assertEquals(RepoStatus.Status.FAILED, row.status());
            assertTrue(row.lastError().contains("internal_error") && row.lastError().contains("injected defect"),
                    row.lastError());
        }
    }

    @Test
    @Timeout(120)
    void aDownloadKilledByAnErrorEndsTheRunLoudly(@TempDir Path dir) throws Exception {
        SimConfig cfg = config();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(dir.resolve("data"))) {
            String victim = sim.truth().dids().get(7);
            IngestMetrics metrics = BackfillFixture.metrics();
            try (SteadyWriter writer = BackfillFixture.openWriter(dir.resolve("data"), store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()),
                         new Throwing(victim, () -> new OutOfMemoryError("injected")), store, writer, metrics,
                         BackfillFixture.route(sim))) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> engine.run(BackfillEngine.Mode.FULL));
                assertTrue(e.getMessage().contains("a backfill download failed") && e.getCause() instanceof OutOfMemoryError,
                        e.toString());
            }
        }
    }

    private static SimConfig config() {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 11;
        cfg.accounts = 60;
        return cfg;
    }

    /** The fixture's client, except that the getRepo of one DID throws what {@code failure} makes. */
    private static final class Throwing extends HttpClient {
        private final HttpClient d = BackfillFixture.client();
        private final String did;
        private final Supplier<? extends Throwable> failure;

        Throwing(String did, Supplier<? extends Throwable> failure) {
            this.did = did;
            this.failure = failure;
        }

        private void check(HttpRequest r) {
            String u = r.uri().toString();
            if (u.contains("com.atproto.sync.getRepo") && (u.contains(did) || u.contains(did.replace(":", "%3A")))) {
                Throwable t = failure.get();
                if (t instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) t;
            }
        }

        @Override
        public <T> HttpResponse<T> send(HttpRequest r, HttpResponse.BodyHandler<T> h) throws IOException, InterruptedException {
            check(r);
            return d.send(r, h);
        }

        @Override
        public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest r, HttpResponse.BodyHandler<T> h) {
            check(r);
            return d.sendAsync(r, h);
        }

        @Override
        public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest r, HttpResponse.BodyHandler<T> h,
                                                                HttpResponse.PushPromiseHandler<T> p) {
            check(r);
            return d.sendAsync(r, h, p);
        }

        @Override
        public Optional<CookieHandler> cookieHandler() {
            return d.cookieHandler();
        }

        @Override
        public Optional<Duration> connectTimeout() {
            return d.connectTimeout();
        }

        @Override
        public Redirect followRedirects() {
            return d.followRedirects();
        }

        @Override
        public Optional<ProxySelector> proxy() {
            return d.proxy();
        }

        @Override
        public SSLContext sslContext() {
            return d.sslContext();
        }

        @Override
        public SSLParameters sslParameters() {
            return d.sslParameters();
        }

        @Override
        public Optional<Authenticator> authenticator() {
            return d.authenticator();
        }

        @Override
        public Version version() {
            return d.version();
        }

        @Override
        public Optional<Executor> executor() {
            return d.executor();
        }
    }
}
