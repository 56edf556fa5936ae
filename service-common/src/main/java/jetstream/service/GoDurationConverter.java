package jetstream.service;

import java.time.Duration;

import jakarta.annotation.Priority;

import org.eclipse.microprofile.config.spi.Converter;

import jetstream.config.Durations;

/**
 * The one converter every {@link Duration} setting goes through (registered for ServiceLoader in
 * {@code META-INF/services}, above Quarkus's own): the reference's Go syntax ({@code 1h30m},
 * {@code 250ms}, {@code 1.5h}, {@code 0}) first; a value Go would refuse falls back to Quarkus's
 * own syntax (ISO-8601 {@code PT5S}, a bare number of seconds, {@code 2d}, {@code 1M}), which the
 * Quarkus settings sharing the converter use.
 */
@Priority(300)
public final class GoDurationConverter implements Converter<Duration> {
    @Override
    public Duration convert(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Durations.parse("duration", value);
        } catch (IllegalArgumentException notGo) {
            try {
                return io.quarkus.runtime.configuration.DurationConverter.parseDuration(value.strip());
            } catch (IllegalArgumentException notQuarkus) {
                throw notGo;
            }
        }
    }
}
