package jetstream.gateway;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready when the feed is connected, the ring holds the writer's tip (cursor replay can resolve), the
 * stats writer is alive (a dead one is restarted by the gateway's sweep), the start-up warm-up is over
 * ({@link GatewayWarmUp}) and, in remote mode, the archive answers (checked by the sweep's catalog listing while it does not).
 *
 * <p>Asynchronous so the probe is answered on the event loop that read it: every input is a volatile
 * read, and a blocking check would queue the answer behind a worker hop while a flood of upgrades
 * keeps the cores busy.
 */
@Readiness
@ApplicationScoped
public class GatewayReadiness implements AsyncHealthCheck {
    @Inject
    Gateway gateway;

    @Override
    public Uni<HealthCheckResponse> call() {
        return Uni.createFrom().item(HealthCheckResponse.named("feed").status(gateway.ready())
                .withData("tip", gateway.ring().tip()).withData("statsWriter", gateway.statsAlive())
                .withData("archive", gateway.archiveReachable())
                .withData("warmUp", gateway.warmUp().outcome()).build());
    }
}
