package jetstream.service;

import java.time.Duration;

import jakarta.annotation.Priority;

import org.eclipse.microprofile.config.spi.Converter;

import jetstream.config.Durations;

/**
 * The one converter every {@link Duration} setting goes through (registered for ServiceLoader in
 * {@code META-INF/services}, above Quarkus's own): the reference's Go syntax ({@code 1h30m},
 * {@code 250ms}, {@code 1.5h}, {@code 0}) and ISO-8601 ({@code PT5S}); for the Quarkus settings that
 * share the converter, also a bare number of seconds ({@code 5}) and days ({@code 2d}).
 */
@Priority(300)
public final class GoDurationConverter implements Converter<Duration> {
    @Override
    public Duration convert(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        if (v.chars().allMatch(Character::isDigit)) {
            return Duration.ofSeconds(Long.parseLong(v));
        }
        if (v.length() > 1 && v.endsWith("d") && v.substring(0, v.length() - 1).chars().allMatch(Character::isDigit)) {
            return Duration.ofDays(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        return Durations.parse("duration", v);
    }
}
