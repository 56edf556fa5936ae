package jetstream.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The XRPC error envelope every service answers with (docs/http-api.md: XRPC router). */
@Tag("unit")
class XrpcHttpTest {
    private static String body(String name, String message) {
        return new String(XrpcHttp.errorBody(name, message), StandardCharsets.UTF_8);
    }

    @Test
    void messageIsLeftOutWhenEmptyOrNull() {
        assertEquals("{\"error\":\"InvalidRequest\",\"message\":\"bad cursor\"}", body("InvalidRequest", "bad cursor"));
        assertEquals("{\"error\":\"InvalidRequest\"}", body("InvalidRequest", ""));
        assertEquals("{\"error\":\"InvalidRequest\"}", body("InvalidRequest", null));
    }

    @Test
    void messageIsEscapedAsGoDoes() {
        assertEquals("{\"error\":\"X\",\"message\":\"a \\\"q\\\" \\u003cb\\u003e \\u0026\\n\"}", body("X", "a \"q\" <b> &\n"));
    }
}
