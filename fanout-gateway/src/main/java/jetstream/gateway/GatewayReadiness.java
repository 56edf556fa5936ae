package jetstream.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready when the feed is connected and the ring holds the writer's tip (cursor replay can resolve). */
@Readiness
@ApplicationScoped
public class GatewayReadiness implements HealthCheck {
    @Inject
    Gateway gateway;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("feed").status(gateway.ready()).withData("tip", gateway.ring().tip()).build();
    }
}
