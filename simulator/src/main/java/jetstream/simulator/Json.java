package jetstream.simulator;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/** JSON responses, written with jackson-core's generator. */
final class Json {
    private static final JsonFactory FACTORY = JsonFactory.builder().build();

    @FunctionalInterface
    interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private Json() {}

    static byte[] object(Body body) {
        ByteArrayOutputStream bos = new ByteArrayOutputStream(256);
        try (JsonGenerator g = FACTORY.createGenerator(bos)) {
            g.writeStartObject();
            body.write(g);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    /** The XRPC error envelope. */
    static byte[] error(String error, String message) {
        return object(g -> {
            g.writeStringField("error", error);
            g.writeStringField("message", message);
        });
    }
}
