package jetstream.ingester;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready once the writer and the feed listener are serving; never gated on the lifecycle phase. */
@Readiness
@ApplicationScoped
public class ReadinessCheck implements HealthCheck {
    @Inject
    IngesterService service;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("ingester").status(service.serving()).build();
    }
}
