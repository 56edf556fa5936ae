package jetstream.archive;

import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jetstream.config.EnvGuard;
import jetstream.config.LogFormat;

/** Refuses to start when a {@code JETSTREAM_*} environment variable is not a known flag (docs/configuration.md); applies the log format. */
@ApplicationScoped
final class EnvironmentCheck {
    void check(@Observes @Priority(1) StartupEvent ev) {
        EnvGuard.check(System.getenv());
        LogFormat.apply(System.getenv());
    }
}
