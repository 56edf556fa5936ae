package jetstream.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready when the feed is connected, the ring holds the writer's tip (cursor replay can resolve), the
 * stats writer is alive (a dead one is restarted by the gateway's sweep) and, in remote mode, the
 * archive answers (checked by the sweep's catalog listing while it does not).
 */
@Readiness
@ApplicationScoped
public class GatewayReadiness implements HealthCheck {
    @Inject
    Gateway gateway;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("feed").status(gateway.ready()).withData("tip", gateway.ring().tip())
                .withData("statsWriter", gateway.statsAlive()).withData("archive", gateway.archiveReachable()).build();
    }
}
