package jetstream.archive;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready once the first manifest load has finished: before that every archive request would wait
 * for it, so a load balancer must not send any. Liveness stays up meanwhile (a full-network load
 * takes tens of seconds and is progress, not a hang). The ingester's phase does not count: during
 * a bootstrap the archive answers 503 itself while {@code /status} must stay reachable.
 */
@Readiness
@ApplicationScoped
public class ArchiveReadiness implements HealthCheck {
    @Inject
    ArchiveServer server;

    @Override
    public HealthCheckResponse call() {
        return check(server.store());
    }

    static HealthCheckResponse check(ManifestStore store) {
        if (store == null) {
            return HealthCheckResponse.named("manifest").down().build();
        }
        boolean loaded = store.loaded().isDone() && !store.loaded().isCompletedExceptionally();
        return HealthCheckResponse.named("manifest").status(loaded).withData("segmentsLoaded", store.loadDone())
                .withData("segmentsFound", store.loadTotal()).build();
    }
}
