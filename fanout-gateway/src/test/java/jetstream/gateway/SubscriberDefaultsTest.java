package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.util.concurrent.ExecutionException;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.http.UpgradeRejectedException;

/** With no settings at all, one client IP may hold 100 subscriptions (docs/configuration.md); the 101st gets 429. */
@QuarkusTest
@Tag("component")
class SubscriberDefaultsTest extends FixtureTestBase {
    @Inject
    GatewayConfig config;

    @Test
    void perIpCapIsOnByDefault() throws Exception {
        assertEquals(100, config.subscribeMaxPerIp());
        assertEquals(384L << 20, config.subscribeStateBudgetBytes());
        for (int i = 0; i < 100; i++) {
            open.add(Ws.connect(vertx, base.getPort(), i % 2 == 0 ? "/subscribe" : UpgradeFilter.V2_PATH, false, null,
                    null));
        }
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> open.add(Ws.connect(vertx, base.getPort(), "/subscribe", false, null, null)));
        UpgradeRejectedException r = assertInstanceOf(UpgradeRejectedException.class, e.getCause());
        assertEquals(429, r.getStatus());
        assertEquals("5", r.getHeaders().get("Retry-After"));
    }
}
