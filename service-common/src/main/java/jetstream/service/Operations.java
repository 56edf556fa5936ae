package jetstream.service;

import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.http.HttpServerStart;
import io.smallrye.health.SmallRyeHealthReporter;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.ObservesAsync;
import jakarta.inject.Inject;
import java.io.IOException;
import java.util.Optional;
import jetstream.config.ListenAddress;
import jetstream.config.BuildInfo;
import jetstream.ops.CrashReport;
import jetstream.ops.DebugServer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Operator surface of each service (docs/http-api.md: Operator surface): crash reports for escaped exceptions, and the
 * debug listener ({@link DebugServer}) when {@code JETSTREAM_DEBUG_ADDR} is set. Its {@code /readyz}
 * is the service's readiness checks plus "the public listener is bound".
 */
@ApplicationScoped
public class Operations {
    private static final Logger LOG = Logger.getLogger(Operations.class);

    @ConfigProperty(name = "jetstream.debug-addr")
    Optional<String> debugAddr;

    @Inject
    SmallRyeHealthReporter health;

    @Inject
    PrometheusMeterRegistry prometheus;

    private volatile boolean publicBound;
    private volatile DebugServer debug;

    void publicListener(@ObservesAsync HttpServerStart start) {
        publicBound = true;
    }

    void start(@Observes @Priority(2) StartupEvent ev) throws IOException {
        CrashReport.installUncaughtHandler();
        LOG.infof("build %s", BuildInfo.current().describe());
        if (debugAddr.isEmpty() || debugAddr.get().isBlank()) {
            return;
        }
        ListenAddress addr = ListenAddress.parse("JETSTREAM_DEBUG_ADDR", debugAddr.get());
        debug = DebugServer.start(addr, new DebugServer.Probes() {
            @Override
            public boolean live() {
                return !health.getLiveness().isDown();
            }

            @Override
            public boolean ready() {
                return publicBound && !health.getReadiness().isDown();
            }

            @Override
            public String metrics() {
                return prometheus.scrape();
            }
        });
        LOG.infof("debug listener on %s (port %d)", addr, debug.port());
    }

    /** The bound debug port, or -1 when the listener is off. */
    public int debugPort() {
        DebugServer d = debug;
        return d == null ? -1 : d.port();
    }

    void stop(@Observes ShutdownEvent ev) {
        DebugServer d = debug;
        debug = null;
        if (d != null) {
            d.close();
        }
    }
}
