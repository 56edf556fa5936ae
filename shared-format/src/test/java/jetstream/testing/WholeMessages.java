package jetstream.testing;

import java.io.ByteArrayOutputStream;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Test helper: a JDK WebSocket listener that joins fragments into whole messages (text as UTF-8 bytes)
 * for {@code onMessage}, requests the next one after each, and completes {@code ended} when the
 * connection closes or fails.
 */
public final class WholeMessages implements WebSocket.Listener {
    private final Consumer<byte[]> onMessage;
    private final CompletableFuture<Void> ended;
    private final StringBuilder text = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();

    public WholeMessages(Consumer<byte[]> onMessage, CompletableFuture<Void> ended) {
        this.onMessage = onMessage;
        this.ended = ended;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
        text.append(data);
        if (last) {
            byte[] m = text.toString().getBytes(StandardCharsets.UTF_8);
            text.setLength(0);
            onMessage.accept(m);
        }
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
        byte[] b = new byte[data.remaining()];
        data.get(b);
        binary.writeBytes(b);
        if (last) {
            byte[] m = binary.toByteArray();
            binary.reset();
            onMessage.accept(m);
        }
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
        ended.complete(null);
        return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
        ended.complete(null);
    }
}
