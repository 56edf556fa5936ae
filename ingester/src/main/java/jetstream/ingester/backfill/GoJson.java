package jetstream.ingester.backfill;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * A metadata row as Go's {@code encoding/json} writes the reference's structs (docs/metadata-keys.md):
 * fields in the order they are written, {@code omitempty} strings and numbers and {@code omitzero}
 * times left out, times as {@link GoTime}. Shared by the {@code repo/} and {@code pdshost/} rows.
 */
final class GoJson {
    /** Writes the fields of one object. */
    @FunctionalInterface
    interface Fields {
        void write(GoJson json) throws IOException;
    }

    private static final JsonFactory FACTORY = new JsonFactory();

    private final JsonGenerator g;

    private GoJson(JsonGenerator g) {
        this.g = g;
    }

    /** One JSON object holding what {@code fields} writes; {@code sizeHint} presizes the buffer. */
    static byte[] object(int sizeHint, Fields fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(sizeHint);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            fields.write(new GoJson(g));
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** A nested object field. */
    void object(String name, Fields fields) throws IOException {
        g.writeObjectFieldStart(name);
        fields.write(this);
        g.writeEndObject();
    }

    /** A string written even when empty. */
    void requiredString(String name, String v) throws IOException {
        g.writeStringField(name, v);
    }

    /** {@code omitempty}: left out when empty. */
    void string(String name, String v) throws IOException {
        if (!v.isEmpty()) {
            g.writeStringField(name, v);
        }
    }

    /** {@code omitempty}: left out when zero. */
    void number(String name, long v) throws IOException {
        if (v != 0) {
            g.writeNumberField(name, v);
        }
    }

    /** {@code omitzero}: left out when unset. */
    void time(String name, Instant t) throws IOException {
        if (t != null) {
            g.writeStringField(name, GoTime.format(t));
        }
    }

    /** A boolean, always written (the reference's booleans carry no {@code omitempty}). */
    void bool(String name, boolean v) throws IOException {
        g.writeBooleanField(name, v);
    }
}
