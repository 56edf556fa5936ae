package jetstream.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready when the feed is connected, the ring holds the writer's tip (cursor replay can resolve) and
 * the stats writer is alive (a dead one is restarted by the gateway's sweep).
 */
@Readiness
@ApplicationScoped
public class GatewayReadiness implements HealthCheck {
    @Inject
    Gateway gateway;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("feed").status(gateway.ready()).withData("tip", gateway.ring().tip())
                .withData("statsWriter", gateway.statsAlive()).build();
    }
}
